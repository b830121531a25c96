package cli

import (
	"os"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/grade/gradetest"
)

// TestMain points the state directory at a fresh temporary folder, so no
// test (a plain quiz saves its answers) writes to the developer's own
// progress; tests that read what was saved set their own. gradetest.Main
// keeps test binaries out of the user's cache and contains the gradings.
func TestMain(m *testing.M) {
	grade.Supervise() // first: a supervisor leaves before making a folder
	dir, err := os.MkdirTemp("", "playground-cli-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("PLAYGROUND_STATE_DIR", dir)
	code := gradetest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
