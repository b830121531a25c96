package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ownership-election/playground/internal/grade"
)

func init() {
	Register(&Command{
		Name:    "init",
		Usage:   "init [DIR]",
		Summary: "write the labs into a new folder of their own, to do them without a clone",
		Help: `Writes the labs into DIR (default playground-labs), a new folder that is
a Go module of its own: each lab's stub file, grader tests and README
under labs/, the harness and etcd packages the tests need, go.mod and
go.sum, all as this program embeds them. Then, in that folder:

  playground                 the course, with the lab screen and watch mode
  playground grade           grade every lab (or some: playground grade 01)
  go test ./labs/...         plain go test works too
  playground experiment run --lab 05       your lab code as the replicas,
  playground experiment explore --lab 05   under faults (labs 05 to 09)

The replica programs and the reference solutions those runs build stay
inside this program (it builds them in its cache folder); the folder
gets only what you edit and what go test needs.

The labs to edit are labs/NN_name/<file>.go. DIR must be empty or not
exist yet.

Exit codes: 0 written, 1 the folder is not empty or cannot be written,
2 bad usage.`,
		Run: runInit,
	})
}

// initReadme is the folder's own README.
const initReadme = `# The playground's labs

Written by ` + "`playground init`" + `. Each lab is a folder in labs/ with a README.md
(the task), a file with functions for you to fill in, and the grader tests.

    playground               the course; its lab screen grades with hints
    playground grade         grade every lab, as the lab screen does
    go test ./labs/01_cas/   one lab with plain go test
    playground experiment run --lab 05      labs 05 to 09: your code as
    playground experiment explore --lab 05  the replicas, under faults

Grading uses only your lab files: the tests, the harness, go.mod and go.sum
are the copies inside the playground program, so edit the lab files, not
the tests.
`

func runInit(ctx context.Context, env *Env, args []string) error {
	names, err := parseFlags(flag.NewFlagSet("init", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	dir := "playground-labs"
	switch len(names) {
	case 0:
	case 1:
		dir = names[0]
	default:
		return Usagef("takes at most one folder: init [DIR]")
	}
	if err := writeLabsFolder(dir); err != nil {
		fmt.Fprintf(env.Stderr, "playground init: %v\n", err)
		return &ExitError{Code: 1}
	}
	fmt.Fprintf(env.Stdout, "Wrote the labs to %s. Next:\n  cd %s\n  playground            # the course\n  playground grade      # grade the labs (go test ./labs/... works too)\nThe files you edit are labs/NN_name/*.go (each lab's README.md says which).\n", dir, dir)
	return nil
}

// writeLabsFolder writes the course's labs into dir, which must be empty
// or missing; nothing is left half-written when it fails.
func writeLabsFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return fmt.Errorf("%s is not empty: give a new folder, so that nothing of yours is overwritten", dir)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", dir, err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, ".playground-init-")
	if err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	if err := grade.Builtin().WriteTo(tmp); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "README.md"), []byte(initReadme), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	os.Remove(dir) // an empty folder, if any: the rename takes its place
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	return nil
}
