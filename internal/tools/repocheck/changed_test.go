package main

import (
	"os/exec"
	"slices"
	"testing"
)

func git(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestChangedPackagesSeeCommitsEditsAndNewFiles: a package counts as
// changed whether the change is committed on the branch, only edited, or
// a new file; a lab stub and an untouched package do not.
func TestChangedPackagesSeeCommitsEditsAndNewFiles(t *testing.T) {
	files := map[string]string{
		"a/a.go": "package a\n", "b/b.go": "package b\n", "c/c.go": "package c\n",
		"d/d.go": "package d\n", "labs/01_cas/cas.go": "package cas\n", "same/s.go": "package s\n",
	}
	root := write(t, files)
	git(t, root, "init", "-q", "-b", "base")
	git(t, root, "add", ".")
	git(t, root, "commit", "-q", "-m", "base")
	git(t, root, "checkout", "-q", "-b", "work")
	write2 := func(name, body string) {
		t.Helper()
		writeFile(t, root, name, body)
	}
	write2("a/a.go", "package a\n\nvar X = 1\n")
	git(t, root, "commit", "-q", "-am", "committed change")
	write2("b/b.go", "package b\n\nvar Y = 1\n")               // edited, not committed
	write2("c/testdata/golden/x.golden", "new golden\n")       // new file under a package
	write2("labs/01_cas/cas.go", "package cas\n\nvar Z = 1\n") // the learner's stub
	got, err := changedPackages(root, "base")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"./a", "./b", "./c"}
	if !slices.Equal(got, want) {
		t.Fatalf("changed packages = %v, want %v", got, want)
	}
}
