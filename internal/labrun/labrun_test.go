package labrun

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
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

// The course this program embeds holds every package of the module that
// a lab's replica program builds, and the lab's reference solution: lab
// runs build them in the course's build folder (grade.Course.Dir), so a
// package missing from kit.go would make every lab run fail to compile
// outside the checkout (a folder `playground init` wrote, an installed
// binary).
func TestCourseHoldsTheLabPrograms(t *testing.T) {
	root, _ := checkout(t, "05")
	files, err := grade.Builtin().Files()
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, f := range files {
		dirs[path.Dir(f)] = true
	}
	for _, l := range registry() {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.Dir}}", "./"+l.Main)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", l.Main, err)
		}
		for _, dir := range strings.Fields(string(out)) {
			rel, err := filepath.Rel(root, dir)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue // the standard library or another module
			}
			if !dirs[filepath.ToSlash(rel)] {
				t.Errorf("lab %s: its replica program builds %s, which the course does not embed (kit.go)", l.ID, rel)
			}
		}
		if sol := "solutions/" + l.ID + "/" + l.File; !slices.Contains(files, sol) {
			t.Errorf("lab %s: the course does not embed its reference %s (kit.go)", l.ID, sol)
		}
	}
}

// A folder that holds the labs alone, as `playground init` writes it (no
// replica programs, no solutions), builds the learner's code and the
// reference; the stub is not built even without the folder's
// labs/stubs.sum (a folder an older init wrote); a compile error names
// the learner's file as it is in their folder.
func TestBuildInALearnersFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds replica programs")
	}
	repo, l := checkout(t, "05")
	root := t.TempDir()
	if err := grade.Builtin().WriteTo(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, l.Main)); err == nil {
		t.Fatalf("the learner's folder has %s: the test would not show that the program travels with the binary", l.Main)
	}
	mine := filepath.Join(root, "labs", l.ID, l.File)
	os.Remove(filepath.Join(root, "labs", "stubs.sum"))
	ctx := context.Background()
	if _, err := Build(ctx, root, l, false); !errors.Is(err, ErrNotWritten) {
		t.Fatalf("the stub, no labs/stubs.sum in the folder: %v, want ErrNotWritten", err)
	}
	sol, err := os.ReadFile(filepath.Join(repo, "solutions", l.ID, l.File))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(mine, sol, 0o644)
	for _, reference := range []bool{false, true} {
		bin, err := Build(ctx, root, l, reference)
		if err != nil {
			t.Fatalf("build (reference %v): %v", reference, err)
		}
		if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("build (reference %v): no program at %s (%v)", reference, bin, err)
		}
	}
	os.WriteFile(mine, []byte("package etcdlock\n\nfunc broken() int { return \"x\" }\n"), 0o644)
	_, err = Build(ctx, root, l, false)
	var be *BuildError
	if !errors.As(err, &be) || !strings.Contains(be.Output, "labs/"+l.ID+"/"+l.File+":3:") || strings.Contains(be.Output, "..") {
		t.Fatalf("a compile error: %v, want the compiler naming labs/%s/%s:3 as in the learner's folder", err, l.ID, l.File)
	}
}
