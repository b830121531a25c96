package labrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/grade"
)

// The runner's own tests: the reference holds under every prepared
// schedule, and a learner's bug is named. Each run lasts about 11 s.

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "labrun-test-*")
	if err == nil {
		os.Setenv(grade.CacheDirEnv, dir)
	}
	code := m.Run()
	if err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// checkout is the course's checkout and the runner of lab id.
func checkout(t *testing.T, id string) (string, Lab) {
	t.Helper()
	wd, _ := os.Getwd()
	root := grade.FindRoot(wd)
	if root == "" {
		t.Fatal("not inside the course's checkout")
	}
	l, ok := Find(id)
	if !ok {
		t.Fatalf("no runner for lab %s", id)
	}
	return root, l
}

func runLab(t *testing.T, l Lab, bin, schedule string) experiment.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := experiment.StartLab(ctx, Spec(l, bin, false, schedule), experiment.Params{}, experiment.Env{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(); err != nil {
		t.Fatalf("%s: %v", schedule, err)
	}
	return run.History()
}

func TestReferenceHolds(t *testing.T) {
	root, l := checkout(t, "07")
	bin, err := Build(context.Background(), root, l, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, schedule := range []string{"pause-owner", "cut-off-owner", "crash-owner"} {
		t.Run(schedule, func(t *testing.T) {
			h := runLab(t, l, bin, schedule)
			if !h.Verdict.Showed {
				t.Fatalf("the reference did not hold under %s: %s", schedule, h.Verdict.Summary)
			}
			if len(h.Faults()) == 0 {
				t.Fatalf("%s injected no fault", schedule)
			}
			// The verdict comes from the history alone: judged again, the
			// same.
			if again := experiment.Replay(&h); again.Showed != h.Verdict.Showed {
				t.Fatalf("replayed verdict %v, recorded %v", again.Showed, h.Verdict.Showed)
			}
		})
	}
}

// Learner bugs the runner names: a leader whose Work ignores the session
// goes on working after it was cut off and etcd gave its key away; one
// that steps down without resigning or revoking leaves its key to expire.
func TestBugIsNamed(t *testing.T) {
	root, l := checkout(t, "07")
	for _, c := range []struct{ patch, schedule, names string }{
		{"mutants/work_ignores_session.patch", "cut-off-owner", "kept-working at"},
		{"mutants/no_resign.patch", "calm", "left-behind at"},
	} {
		t.Run(c.patch, func(t *testing.T) {
			src := patched(t, root, l, "solutions/07_election/testdata/"+c.patch)
			bin, err := BuildWith(context.Background(), root, l, src)
			if err != nil {
				t.Fatal(err)
			}
			h := runLab(t, l, bin, c.schedule)
			if h.Verdict.Showed {
				t.Fatalf("the bug held: %s", h.Verdict.Summary)
			}
			if s := strings.ToLower(h.Verdict.Summary); !strings.Contains(s, c.names) || !replicaName.MatchString(s) {
				t.Fatalf("the verdict does not name %q and a replica: %s", c.names, h.Verdict.Summary)
			}
		})
	}
}

// A replica that panics is that replica's failure: the others go on.
func TestPanicIsOneReplicasFailure(t *testing.T) {
	root, l := checkout(t, "07")
	sol, err := os.ReadFile(filepath.Join(root, "solutions", l.ID, l.File))
	if err != nil {
		t.Fatal(err)
	}
	old := "\tc.Work(wctx, term)"
	if !strings.Contains(string(sol), old) {
		t.Fatal("the solution changed: no Work call to break")
	}
	bad := strings.Replace(string(sol), old, "\tif term.Token == 2 {\n\t\tvar m map[string]int\n\t\tm[\"boom\"] = 1\n\t}\n"+old, 1)
	src := filepath.Join(t.TempDir(), l.File)
	os.WriteFile(src, []byte(bad), 0o644)
	bin, err := BuildWith(context.Background(), root, l, src)
	if err != nil {
		t.Fatal(err)
	}
	h := runLab(t, l, bin, "calm")
	if h.Verdict.Showed || !strings.Contains(h.Verdict.Summary, "panic: assignment to entry in nil map") {
		t.Fatalf("the panic is not named: %s", h.Verdict.Summary)
	}
	// The panic unwinds through the solution's deferred closeSession,
	// which revokes the lease: the next leader may be recorded before
	// the failure is.
	failed := ""
	leaders := map[string]bool{}
	for _, e := range h.Events {
		switch {
		case e.Kind == experiment.ReplicaFailed && failed == "":
			failed = e.Replica
		case e.Kind == experiment.Acquired:
			leaders[e.Replica] = true
		}
	}
	delete(leaders, failed)
	if failed == "" || len(leaders) == 0 {
		t.Fatalf("failed replica %q; no other replica led (%v)", failed, leaders)
	}
}

// Every lab with a replica program has a scenario to judge its runs, and
// the other way round.
func TestEveryLabHasAScenario(t *testing.T) {
	if got, want := strings.Join(experiment.LabIDs(), " "), strings.Join(IDs(), " "); got != want {
		t.Fatalf("labs with a scenario: %s; labs with a replica program: %s", got, want)
	}
}

func TestCompileErrorShowsCompiler(t *testing.T) {
	root, l := checkout(t, "07")
	src := filepath.Join(t.TempDir(), l.File)
	os.WriteFile(src, []byte("package election\n\nfunc broken() int { return \"x\" }\n"), 0o644)
	_, err := BuildWith(context.Background(), root, l, src)
	var be *BuildError
	if !errors.As(err, &be) || !strings.Contains(be.Output, "election.go:3") {
		t.Fatalf("want the compiler's message naming election.go:3, got %v", err)
	}
}

func TestStubIsNotWritten(t *testing.T) {
	root := t.TempDir()
	l := Lab{ID: "07_election", File: "election.go"}
	os.MkdirAll(filepath.Join(root, "labs", l.ID), 0o755)
	os.WriteFile(filepath.Join(root, "labs", l.ID, l.File), []byte("package x\n"), 0o644)
	// git hash-object of "package x\n".
	os.WriteFile(filepath.Join(root, "labs", "stubs.sum"), []byte("823aafd0712b6c533df84b17d9b7ac6ae43e66fa  labs/07_election/election.go\n"), 0o644)
	if _, err := Build(context.Background(), root, l, false); !errors.Is(err, ErrNotWritten) {
		t.Fatalf("the stub: got %v, want ErrNotWritten", err)
	}
	os.WriteFile(filepath.Join(root, "labs", l.ID, l.File), []byte("package x // written\n"), 0o644)
	if stub, err := isStub(root, l); err != nil || stub {
		t.Fatalf("an edited file: stub=%v err=%v", stub, err)
	}
}

var replicaName = regexp.MustCompile(`\br[1-3]\b`)

// patched is the solution with a learner bug's patch applied, in a
// temporary file.
func patched(t *testing.T, root string, l Lab, patch string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, patch))
	if err != nil {
		t.Fatal(err)
	}
	p, err := grade.ParsePatch(patch, string(text))
	if err != nil {
		t.Fatal(err)
	}
	sol, err := os.ReadFile(filepath.Join(root, "solutions", l.ID, l.File))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(string(sol))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), l.File)
	if err := os.WriteFile(src, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}
