package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/labstub"
)

// fixtureRepo copies the fixture module into a new git repository with
// one commit (the course as shipped) and returns its root and a git
// runner for it.
func fixtureRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixtureConfig(t).Root)); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(git, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "-m", "course")
	return root, run
}

// A learner who commits their solution (and a helper file) moves HEAD:
// the stub must still come from labs/stubs.sum, so the check on the
// untouched stub still passes and make test stays green.
func TestPristineStubWithTheSolutionCommitted(t *testing.T) {
	root, git := fixtureRepo(t)
	sol, err := os.ReadFile(filepath.Join(root, "solutions/01_demo/demo.go"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "labs/01_demo/demo.go"), string(sol))
	write(t, filepath.Join(root, "labs/01_demo/helper.go"), "package demo\n\n// Add is declared twice: this file alone breaks the build.\nfunc Add(a, b int) int { return a + b }\n")
	git("add", "-A")
	git("commit", "-q", "-m", "my solution")
	if head := git("show", "HEAD:labs/01_demo/demo.go"); head != string(sol) {
		t.Fatal("the fixture did not commit the solution")
	}

	p, err := loadPristine(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stub := filepath.Join("labs", "01_demo", "demo.go")
	helper := filepath.Join("labs", "01_demo", "helper.go")
	if len(p.Overlay) != 2 || p.Overlay[helper] != "" || p.Overlay[stub] == "" {
		t.Fatalf("pristine overlay = %v, want the stub restored and the committed helper hidden", p.Overlay)
	}
	restored, err := os.ReadFile(p.Overlay[stub])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(restored, sol) || !strings.Contains(string(restored), "ErrNotImplemented") {
		t.Fatalf("the restored stub is not the shipped one:\n%s", restored)
	}
	if len(p.Notes) != 0 {
		t.Errorf("notes %q, want none", p.Notes)
	}
	r := checkLab(context.Background(), config{Root: root, Count: 1, Pristine: p}, "01_demo")
	if r.StubFailing != 2 || r.SolutionPass != 2 || r.StubSkipped {
		t.Errorf("report = %+v, want the shipped stub failing both steps and the solution passing", r)
	}
	for _, prob := range r.Problems {
		if !strings.Contains(prob, "survivor.patch") && !strings.Contains(prob, "stale.patch") && !strings.Contains(prob, "wrong.go") && !strings.Contains(prob, "sometimes.patch") {
			t.Errorf("unexpected problem in a checkout with the solution committed: %s", prob)
		}
	}
}

// A clone without the stub's git object falls back to HEAD's copy, and
// says so.
func TestPristineStubObjectMissing(t *testing.T) {
	root, git := fixtureRepo(t)
	sum := filepath.Join(root, "labs", "stubs.sum")
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	hash := labstub.BlobHash(mustRead(t, filepath.Join(root, "labs/01_demo/demo.go")))
	write(t, sum, strings.Replace(string(data), hash, strings.Repeat("0", 40), 1))
	git("commit", "-q", "-am", "a manifest naming an object nobody has")
	p, err := loadPristine(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "git has no object 000000000000 for labs/01_demo/demo.go") || !strings.Contains(p.Notes[0], "checking HEAD's copy") {
		t.Errorf("notes %q, want one saying the object is missing and HEAD's copy is used", p.Notes)
	}
	if len(p.Overlay) != 0 {
		t.Errorf("overlay %v, want none: HEAD's stub is the working tree's", p.Overlay)
	}
}

// Without git an edited stub cannot be restored: its untouched-stub check
// is skipped, with a note, instead of failing on the learner's solution.
func TestPristineWithoutGit(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixtureConfig(t).Root)); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--show-prefix").CombinedOutput(); err == nil {
		t.Skipf("the temporary folder is inside a git work tree: %s", out)
	}
	write(t, filepath.Join(root, "labs/01_demo/demo.go"), string(mustRead(t, filepath.Join(root, "solutions/01_demo/demo.go"))))
	p, err := loadPristine(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !p.Unchecked["labs/01_demo/demo.go"] || p.Unchecked["labs/02_leaky/leaky.go"] || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "labs/01_demo/demo.go is not the stub the course ships") {
		t.Fatalf("unchecked %v notes %q, want labs/01_demo/demo.go alone, with a note", p.Unchecked, p.Notes)
	}
	r := checkLab(context.Background(), config{Root: root, Count: 1, Pristine: p}, "01_demo")
	if !r.StubSkipped || r.SolutionPass != 2 {
		t.Errorf("report = %+v, want the stub check skipped and the solution passing", r)
	}
	for _, prob := range r.Problems {
		if strings.Contains(prob, "untouched stub") {
			t.Errorf("the learner's solution was checked as the stub: %s", prob)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// labs/stubs.sum is the course's record of its stubs. It must name every
// lab's stub, match the stubs of the commit that last wrote it (or the
// working tree's while it is being rewritten), and no later commit may
// change a stub together with course files outside labs/: that is a
// course change the manifest missed (run labcheck -write-stubs). A
// learner's commits touch labs/ only, so their checkout passes.
func TestStubsSumMatchesTheCourse(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := labstub.ReadSums(root)
	if err != nil {
		t.Fatal(err)
	}
	stubs, err := currentStubs(root)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, e := range entries {
		named = append(named, e.Path)
	}
	if strings.Join(named, "\n") != strings.Join(stubs, "\n") {
		t.Fatalf("%s names %q, want every lab's stub %q: run go run ./internal/tools/labcheck -write-stubs", StubsSum, named, stubs)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	git := gitRunner(root)
	if _, err := git("rev-parse", "--verify", "-q", "HEAD"); err != nil {
		t.Skip("not a git checkout")
	}
	last, _ := git("log", "-1", "--format=%H", "--", StubsSum)
	m := strings.TrimSpace(string(last))
	_, modified := git("diff", "--quiet", "HEAD", "--", StubsSum)
	if m == "" || modified != nil {
		// Being written: it must describe the working tree.
		for _, e := range entries {
			if h := labstub.BlobHash(mustRead(t, filepath.Join(root, filepath.FromSlash(e.Path)))); h != e.Hash {
				t.Errorf("%s names %s for %s, but the file's hash is %s: run go run ./internal/tools/labcheck -write-stubs", StubsSum, e.Hash[:12], e.Path, h[:12])
			}
		}
		return
	}
	prefix, err := git("rev-parse", "--show-prefix")
	if err != nil {
		t.Fatal(err)
	}
	pre := strings.TrimSpace(string(prefix))
	for _, e := range entries {
		out, err := git("rev-parse", m+":"+pre+e.Path)
		if err != nil {
			t.Errorf("%s is not in commit %.12s, which last wrote %s", e.Path, m, StubsSum)
			continue
		}
		if h := strings.TrimSpace(string(out)); h != e.Hash {
			t.Errorf("%s names %.12s for %s, but commit %.12s (which wrote it) has %.12s: run go run ./internal/tools/labcheck -write-stubs and commit it with the stub", StubsSum, e.Hash, e.Path, m, h)
		}
	}
	args := []string{"log", "--format=%H", m + "..HEAD", "--"}
	for _, e := range entries {
		args = append(args, pre+e.Path)
	}
	later, err := git(args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range strings.Fields(string(later)) {
		files, err := git("show", "--name-only", "--format=", c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Fields(string(files)) {
			if rel := strings.TrimPrefix(f, pre); strings.Contains(rel, "/") && !strings.HasPrefix(rel, "labs/") {
				t.Errorf("commit %.12s changed a stub together with %s after %s was last written: if the stub change is the course's, run go run ./internal/tools/labcheck -write-stubs and commit %s", c, rel, StubsSum, StubsSum)
				break
			}
		}
	}
}
