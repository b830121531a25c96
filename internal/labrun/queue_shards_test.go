package labrun

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/experiment"
)

// The runners of labs 08 (herd queue) and 09 (shard ownership): the
// reference holds under pause-owner, cut-off-owner and crash-owner, some
// of each lab's own learner bugs (solutions/NN/testdata) are named by a
// violation, and the stub as shipped is not written yet. The runs of one
// lab go in parallel: each has its own etcd, replicas and namespace.

// runnerCase is one run: the reference, or the solution with a learner
// bug's patch, under a schedule; names is what the verdict must name
// ("" for the reference, which must hold).
type runnerCase struct {
	name, patch, schedule, names string
}

func TestLab08Runner(t *testing.T) {
	runCases(t, "08", []runnerCase{
		{"reference/pause-owner", "", "pause-owner", ""},
		{"reference/cut-off-owner", "", "cut-off-owner", ""},
		{"reference/crash-owner", "", "crash-owner", ""},
		// Takes the turn as soon as its predecessor goes: a waiter that
		// leaves the middle of the line while the holder is stuck hands
		// the lock to the one behind it.
		{"assume_turn", "mutants/assume_turn.patch", "pause-owner", "two-holders at"},
		// A queue key without the lease outlives its replica.
		{"enqueue_no_lease", "bugs/enqueue_no_lease.patch", "calm", "left-behind at"},
		// Oldest first: every waiter but the first is told its key is gone.
		{"oldest_first", "bugs/oldest_first.patch", "calm", "ticket-lost-but-held at"},
	})
}

func TestLab09Runner(t *testing.T) {
	runCases(t, "09", []runnerCase{
		{"reference/pause-owner", "", "pause-owner", ""},
		{"reference/cut-off-owner", "", "cut-off-owner", ""},
		{"reference/crash-owner", "", "crash-owner", ""},
		// A commit that only checks the shard has an owner: the paused
		// worker's commit, held in its frozen network, lands on the new
		// owner's shard when it wakes.
		{"exists_only", "mutants/exists_only.patch", "pause-owner", "stale-commit at"},
		// A revoke with Run's cancelled context never happens: the
		// shards wait out the lease.
		{"revoke_with_run_ctx", "bugs/revoke_with_run_ctx.patch", "calm", "left-behind at"},
		// Only members' changes wake a rebalance: the shards the others
		// give back to a worker that joins again are never claimed.
		{"watch_members_only", "bugs/watch_members_only.patch", "crash-owner", "unowned at"},
	})
}

// runCases builds every case's replica program one after the other (the
// builds share the cache), then runs the cases in parallel.
func runCases(t *testing.T, lab string, cases []runnerCase) {
	root, l := checkout(t, lab)
	bins := make([]string, len(cases))
	for i, c := range cases {
		var err error
		if c.patch == "" {
			bins[i], err = Build(context.Background(), root, l, true)
		} else {
			bins[i], err = BuildWith(context.Background(), root, l, patched(t, root, l, "solutions/"+l.ID+"/testdata/"+c.patch))
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := runLab(t, l, bins[i], c.schedule)
			if c.schedule != "calm" && len(h.Faults()) == 0 {
				t.Fatalf("%s injected no fault", c.schedule)
			}
			// The verdict comes from the history alone: judged again, the
			// same.
			if again := experiment.Replay(&h); again.Showed != h.Verdict.Showed || again.Summary != h.Verdict.Summary {
				t.Fatalf("replayed verdict %q, recorded %q", again.Summary, h.Verdict.Summary)
			}
			s := h.Verdict.Summary
			t.Logf("%s under %s: %s", c.name, c.schedule, s)
			switch {
			case c.names == "" && !h.Verdict.Showed:
				t.Fatalf("the reference did not hold under %s: %s", c.schedule, s)
			case c.names != "" && h.Verdict.Showed:
				t.Fatalf("the bug held under %s: %s", c.schedule, s)
			case c.names != "" && (!strings.Contains(strings.ToLower(s), c.names) || !replicaName.MatchString(s)):
				t.Fatalf("the verdict does not name %q and a replica: %s", c.names, s)
			}
		})
	}
}

// The stub as shipped (the blob labs/stubs.sum names) is not written
// yet: no replica is started for it.
func TestStubsOf08And09AreNotWritten(t *testing.T) {
	for _, id := range []string{"08", "09"} {
		root, l := checkout(t, id)
		rel := "labs/" + l.ID + "/" + l.File
		stub := shippedStub(t, root, rel)
		tmp := t.TempDir()
		os.MkdirAll(filepath.Join(tmp, "labs", l.ID), 0o755)
		os.WriteFile(filepath.Join(tmp, filepath.FromSlash(rel)), stub, 0o644)
		sums, err := os.ReadFile(filepath.Join(root, "labs", "stubs.sum"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, "labs", "stubs.sum"), sums, 0o644)
		_, err = Build(context.Background(), tmp, l, false)
		if !errors.Is(err, ErrNotWritten) || !strings.Contains(err.Error(), rel) {
			t.Fatalf("lab %s's stub: got %v, want ErrNotWritten naming %s", l.ID, err, rel)
		}
	}
}

// shippedStub is the stub's text as the course ships it: the git blob
// whose hash labs/stubs.sum gives for rel.
func shippedStub(t *testing.T, root, rel string) []byte {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(root, "labs", "stubs.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(sums), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == rel {
			cmd := exec.Command("git", "cat-file", "blob", f[0])
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Skipf("git cannot show the shipped stub %s (%s): %v", rel, f[0], err)
			}
			return out
		}
	}
	t.Fatalf("labs/stubs.sum has no line for %s", rel)
	return nil
}
