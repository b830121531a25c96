package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ownership-election/playground/internal/labrun"
)

// learnerCheckout copies into root the parts of the checkout at src that
// a lab run of l builds from (go.mod, labs/, the runner's packages and
// what they import from the module), with the lab's reference solution
// as the learner's file: a learner who solved the lab.
func learnerCheckout(src, root string, l labrun.Lab) error {
	list := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", l.Main)
	list.Dir = src
	out, err := list.Output()
	if err != nil {
		return fmt.Errorf("go list %s: %w", l.Main, err)
	}
	dirs := []string{"labs"}
	for _, d := range strings.Fields(string(out)) {
		if rel, err := filepath.Rel(src, d); err == nil && !strings.HasPrefix(rel, "..") && !strings.HasPrefix(rel, "labs") {
			dirs = append(dirs, rel)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := copyFile(filepath.Join(src, f), filepath.Join(root, f)); err != nil {
			return err
		}
	}
	for _, d := range dirs {
		if err := copyTree(filepath.Join(src, d), filepath.Join(root, d), d == "labs"); err != nil {
			return err
		}
	}
	sol := filepath.Join(src, "solutions", l.ID, l.File)
	return copyFile(sol, filepath.Join(root, "labs", l.ID, l.File))
}

// copyTree copies dir's files (and, deep, its folders too).
func copyTree(from, to string, deep bool) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range ents {
		var err error
		switch {
		case e.IsDir() && deep:
			err = copyTree(filepath.Join(from, e.Name()), filepath.Join(to, e.Name()), true)
		case !e.IsDir():
			err = copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
