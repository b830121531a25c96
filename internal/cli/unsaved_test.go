package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentRecordNotSaved: a run that showed what it exists to show
// but whose --record file could not be written exits 1 and says the
// history was not saved, after its verdict.
func TestExperimentRecordNotSaved(t *testing.T) {
	file := filepath.Join(t.TempDir(), "no-such-folder", "run.json")
	code, out, errOut := runCLI(t, "experiment", "run", "fencing", "--record", file)
	if code != 1 || !strings.HasPrefix(lastLine(out), "verdict: SHOWN") {
		t.Fatalf("exit %d, last line %q; want exit 1 after a verdict that showed\n%s", code, lastLine(out), errOut)
	}
	if !strings.Contains(errOut, "playground experiment: the run's history was not saved: record "+file) {
		t.Errorf("stderr %q does not say the history was not saved", errOut)
	}
}
