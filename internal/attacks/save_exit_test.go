package attacks

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/cli"
)

// TestAttackSaveFailsSilently: the progress file cannot be written (here
// its lock is a link into /proc, where nobody, root included, can create
// a file). A safe system exits non-zero from every command asked to save
// and says what was not saved; an unsafe one exits 0 and a script (or a
// learner) believes the answers are kept.
func TestAttackSaveFailsSilently(t *testing.T) {
	state := t.TempDir()
	t.Setenv("PLAYGROUND_STATE_DIR", state)
	if err := os.Symlink("/proc/no-such-process/lock", filepath.Join(state, "progress.json.lock")); err != nil {
		t.Fatal(err)
	}
	course := t.TempDir()
	writeFile(t, filepath.Join(course, "lessons", "01-leases", "lesson.md"), "---\nid: leases\ntitle: Leases\nsummary: What a lease is.\nobjectives: [Size a lease.]\nquiz: leases\n---\n# Leases\n\nA lease is a lock with a time limit.\n")
	writeFile(t, filepath.Join(course, "lessons", "01-leases", "quiz.yaml"), "id: leases\ntitle: Leases\nquestions:\n  - id: min-ttl\n    kind: numeric\n    prompt: Renew every 5 s, pauses up to 9 s. Smallest safe TTL?\n    answer: 19\n    tolerance: 0\n    unit: s\n    explain: 2 x 5 + 9 = 19.\n    takeaway: renew x 2 + pause <= TTL.\n")
	for _, c := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"quiz", "leases", "--plain"}, "19\n", "your answers to quiz leases were not saved"},
		{[]string{"progress", "reset", "all"}, "", "was not forgotten"},
	} {
		var out, errOut bytes.Buffer
		code := cli.Main(context.Background(), append([]string{"--content", course}, c.args...), strings.NewReader(c.stdin), &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%s with the progress unsavable: exit %d, stderr %q; want non-zero and %q", strings.Join(c.args, " "), code, errOut.String(), c.want)
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
