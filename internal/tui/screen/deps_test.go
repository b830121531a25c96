package screen_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestScreensThatShowTextLinkNoEtcd: the screen contract names no etcd
// type, so a screen that only shows text builds without etcd (the quiz
// linked 636 packages, 44 of them etcd's server, for one field of
// EtcdReady). The timeline component draws a history (internal/history)
// and links no etcd either, whichever screen embeds it. The lab screen is
// not in the list: for the runs of the learner's code under faults it
// asks internal/experiment for the labs' schedules and reads their
// histories with it; the run itself is a child process.
func TestScreensThatShowTextLinkNoEtcd(t *testing.T) {
	const mod = "github.com/ownership-election/playground/internal/tui/screen"
	forbid := map[string]string{
		mod:                   "go.etcd.io/",
		mod + "/home":         "go.etcd.io/",
		mod + "/quiz":         "go.etcd.io/",
		mod + "/reader":       "go.etcd.io/",
		mod + "/progressview": "go.etcd.io/",
		"github.com/ownership-election/playground/internal/tui/timeline": "go.etcd.io/",
	}
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}
	for p := range forbid {
		args = append(args, p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		prefix, ok := forbid[pkg]
		if !ok {
			continue
		}
		seen++
		for _, d := range strings.Fields(deps) {
			if strings.HasPrefix(d, prefix) {
				t.Errorf("%s links %s", pkg, d)
				break
			}
		}
	}
	if seen != len(forbid) {
		t.Fatalf("go list answered for %d of %d packages:\n%s", seen, len(forbid), out)
	}
}
