package labrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/grade"
)

// The runner's unit tests; runners_test.go runs the labs.

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

// Every lab with a replica program has a scenario to judge its runs, and
// the other way round: the registry gives each lab both.
func TestEveryLabHasAScenario(t *testing.T) {
	for _, l := range registry() {
		if sc := Scenario(l.ID); sc == nil || sc.Name != ScenarioName(l.ID) || LookupScenario(sc.Name) != sc {
			t.Errorf("lab %s: no scenario to judge its runs by its name %s", l.ID, ScenarioName(l.ID))
		}
		if l.Main == "" || l.File == "" {
			t.Errorf("lab %s has a scenario but no replica program", l.ID)
		}
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

// The stub as shipped (by its hash in labs/stubs.sum) is not built: the
// lab is not written yet.
func TestStubIsNotWritten(t *testing.T) {
	for _, l := range labs {
		t.Run(l.ID, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, "labs", l.ID), 0o755)
			os.WriteFile(filepath.Join(root, "labs", l.ID, l.File), []byte("package x\n"), 0o644)
			// git hash-object of "package x\n".
			sum := "823aafd0712b6c533df84b17d9b7ac6ae43e66fa  labs/" + l.ID + "/" + l.File + "\n"
			os.WriteFile(filepath.Join(root, "labs", "stubs.sum"), []byte(sum), 0o644)
			if _, err := Build(context.Background(), root, l, false); !errors.Is(err, ErrNotWritten) || !strings.Contains(err.Error(), "not written yet") {
				t.Fatalf("the stub: got %v, want ErrNotWritten", err)
			}
			os.WriteFile(filepath.Join(root, "labs", l.ID, l.File), []byte("package x // written\n"), 0o644)
			if stub, err := isStub(root, l); err != nil || stub {
				t.Fatalf("an edited file: stub=%v err=%v", stub, err)
			}
		})
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
