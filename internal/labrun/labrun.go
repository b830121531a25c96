// Package labrun runs the learner's own lab code as an experiment's
// replicas: every lab run is here, above the engine (internal/experiment),
// which it drives as any scenario's script does. It owns the one registry
// of labs with a runner (registry.go: each lab's file, replica program,
// the properties its runs are held to), the build of a lab's replica
// program (in the course's build folder from the copies the binary
// embeds, the learner's file from labs/NN_*/ or the reference put in by a
// build overlay, as grading does), the prepared fault schedules
// (schedule.go), the control lines the lab screen sends a run in another
// process (control.go), the replica processes themselves (process.go),
// and each lab's rules (lab05.go ... lab09.go, verdict.go). The parent
// process keeps etcd, the fault proxies, the fenced resource, the history
// and the checker; a replica process (labrun/replica) reports what the
// lab's code did.
package labrun

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/labstub"
	"github.com/ownership-election/playground/internal/proctree"
	"github.com/ownership-election/playground/internal/sanitize"
)

// ErrNotWritten: the learner's file is still the stub the course ships.
var ErrNotWritten = errors.New("the lab is not written yet") // said to the learner as is

// ErrBuildTimeout: the build of a replica program gave no result in time
// (a cold build on a loaded machine), which says nothing of the code.
var ErrBuildTimeout = errors.New("the build timed out")

// BuildError is a replica program that did not compile; Output is what
// the compiler said.
type BuildError struct {
	Lab    string
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("lab %s does not compile:\n%s", e.Lab, strings.TrimSpace(e.Output))
}

// A build is stopped when the go command has named no new package for
// BuildStall (a cold build compiles etcd's client, grpc and protobuf; on
// a loaded 2-core machine one package or the final link can take a
// minute or two), or after BuildTimeout in all. A slow build that keeps
// compiling is not cut short: a first build of a replica program took 30
// minutes on a 2-core machine at a load average of 40 (coldbuild).
const (
	BuildStall   = 5 * time.Minute
	BuildTimeout = time.Hour
)

// BuildProgress is how far a build has come: what a screen shows while a
// first build runs.
type BuildProgress struct {
	Elapsed  time.Duration
	Packages int    // packages compiled so far (go build -v names each)
	Current  string // the package named last: the one being compiled or linked
}

// String says it in a line: "1m12s, 143 packages compiled, last
// go.etcd.io/etcd/client/v3".
func (p BuildProgress) String() string {
	noun := "packages"
	if p.Packages == 1 {
		noun = "package"
	}
	s := fmt.Sprintf("%s, %d %s compiled", p.Elapsed.Round(time.Second), p.Packages, noun)
	if p.Current != "" {
		s += ", last " + p.Current
	}
	return s
}

// Build compiles the replica program of lab l with the learner's file
// from the folder at root (a checkout, or a folder `playground init`
// wrote) or, with reference, the reference solution. The binary is kept
// in the cache folder and relinked only when what it is built from
// changed.
//
// It is built in the course's build folder (grade.Course.Dir), from the
// copies this program embeds, with only the learner's stub files put in
// by an overlay, as grading builds a lab: so the harness (replica) always
// speaks the protocol of the program that drives it, and a folder that
// holds the labs alone (init, an installed binary) runs them as a
// checkout does.
func Build(ctx context.Context, root string, l Lab, reference bool) (string, error) {
	return BuildReporting(ctx, root, l, reference, nil)
}

// BuildReporting is Build that tells progress how far the build has
// come, as each package is compiled and at least every few seconds
// (nil: it is told nothing).
func BuildReporting(ctx context.Context, root string, l Lab, reference bool, progress func(BuildProgress)) (string, error) {
	if !reference {
		if stub, err := isStub(root, l); err == nil && stub {
			return "", fmt.Errorf("%w: labs/%s/%s is the stub as shipped; write it first (README.md in that folder says how)", ErrNotWritten, l.ID, l.File)
		}
		return buildWith(ctx, root, l, "", "", progress)
	}
	dir, err := grade.Builtin().Dir()
	if err != nil {
		return "", fmt.Errorf("build lab %s: %w", l.ID, err)
	}
	sol := filepath.Join(dir, "solutions", l.ID, l.File)
	if _, err := os.Stat(sol); err != nil {
		return "", fmt.Errorf("build lab %s: this program holds no reference solution of the lab (%w)", l.ID, err)
	}
	// Kept under one name whatever the course's version: the next
	// version's build relinks it instead of leaving another binary.
	return buildWith(ctx, root, l, sol, "reference", progress)
}

// BuildWith is Build with source (a path) compiled in place of the
// learner's file; "" compiles the learner's file as it is.
func BuildWith(ctx context.Context, root string, l Lab, source string) (string, error) {
	return buildWith(ctx, root, l, source, source, nil)
}

// buildWith builds l's replica program with source in place of the
// learner's file ("" for the learner's file), kept under key (binPath).
func buildWith(ctx context.Context, root string, l Lab, source, key string, progress func(BuildProgress)) (string, error) {
	bin, err := binPath(root, l, key)
	if err != nil {
		return "", err
	}
	dir, err := grade.Builtin().Dir()
	if err != nil {
		return "", fmt.Errorf("build lab %s: %w", l.ID, err)
	}
	ov, shown, cleanup, err := overlay(dir, root, l, source)
	if err != nil {
		return "", err
	}
	defer cleanup()
	bctx, cancel := context.WithTimeout(ctx, BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(bctx, "go", "build", "-v", "-o", bin, "-overlay", ov, l.Main)
	cmd.Dir = dir
	// The course's go.mod and go.sum are complete: a GOFLAGS=-mod=mod of
	// the learner's must not let the go command change them (as grading).
	// No version control stamp: the cache folder may sit inside a git
	// repository of the learner's (a home folder kept in git), which says
	// nothing of the program and whose status could fail the build.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly -buildvcs=false")
	proctree.Group(cmd) // a cancelled build ends the compilers go started too
	proctree.KillGroupOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	w := newBuildWatch(progress, cancel)
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	if err == nil {
		w.ticking.Add(1)
		go w.tick(bctx)
		err = cmd.Wait()
	}
	w.stop()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case w.stalled():
			return "", fmt.Errorf("build lab %s: %w: the go command compiled nothing new for %s (%s)", l.ID, ErrBuildTimeout, BuildStall, w.progress())
		case bctx.Err() != nil:
			return "", fmt.Errorf("build lab %s: %w: no result after %s (%s)", l.ID, ErrBuildTimeout, BuildTimeout, w.progress())
		}
		// The compiler quotes the learner's lines.
		return "", &BuildError{Lab: l.ID, Output: sanitize.Text(shownPaths(w.output(), dir, shown))}
	}
	return bin, nil
}

// binPath is where the replica program of l is kept: one file per
// learner's folder, lab and key (what replaces the learner's file: ""
// none, "reference", or a source's path).
func binPath(root string, l Lab, source string) (string, error) {
	dir := filepath.Join(filepath.Dir(grade.DefaultBinDir()), "labrun")
	if grade.DefaultBinDir() == "" {
		dir = filepath.Join(os.TempDir(), "playground-labrun")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build lab %s: %w", l.ID, err)
	}
	key := sha256.Sum256([]byte(root + "\x00" + source))
	return filepath.Join(dir, fmt.Sprintf("%s-%x", l.ID, key[:6])), nil
}

// overlay writes the go overlay that puts, in the course's build folder
// dir, the learner's stub files of l from root in place of the course's
// stubs, and source (when given) in place of the lab's file. shown maps
// each file put in (its absolute path) to how a message names it: the
// learner's as labs/NN_slug/file.go, as in their folder.
func overlay(dir, root string, l Lab, source string) (ov string, shown map[string]string, cleanup func(), err error) {
	files, shown := map[string]string{}, map[string]string{}
	add := func(rel, f, name string) error {
		abs, err := filepath.Abs(f)
		if err != nil {
			return fmt.Errorf("build lab %s: %w", l.ID, err)
		}
		if _, err := os.Stat(abs); err != nil && f != source {
			return fmt.Errorf("build lab %s: %s is missing: it is the file you write the lab in (%w)", l.ID, name, err)
		} else if err != nil {
			return fmt.Errorf("build lab %s: %w", l.ID, err)
		}
		files[rel], shown[abs] = abs, name
		return nil
	}
	for _, name := range grade.Builtin().StubFiles(l.ID) {
		rel := filepath.Join("labs", l.ID, name)
		if source != "" && name == l.File {
			continue
		}
		if err := add(rel, filepath.Join(root, rel), filepath.ToSlash(rel)); err != nil {
			return "", nil, nil, err
		}
	}
	if source != "" {
		if err := add(filepath.Join("labs", l.ID, l.File), source, source); err != nil {
			return "", nil, nil, err
		}
	}
	ov, cleanup, err = grade.WriteOverlay(dir, files)
	return ov, shown, cleanup, err
}

// shownPaths rewrites the go command's output, run in dir, so that it
// names each file put in as shown says (the go command names a file put
// in by its own path, relative to dir when that is shorter).
func shownPaths(out, dir string, shown map[string]string) string {
	var pairs []string
	for abs, name := range shown {
		pairs = append(pairs, abs, name)
		if rel, err := filepath.Rel(dir, abs); err == nil {
			pairs = append(pairs, rel, name)
		}
	}
	return strings.NewReplacer(pairs...).Replace(out)
}

// isStub reports whether the learner's file is the stub as shipped, by
// its git blob hash in labs/stubs.sum: root's, or where root has none (a
// folder an older init wrote) the copy this program embeds.
func isStub(root string, l Lab) (bool, error) {
	rel := "labs/" + l.ID + "/" + l.File
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return false, err
	}
	sums, err := labstub.ReadSums(root)
	if err == nil && sums == nil {
		var dir string
		if dir, err = grade.Builtin().Dir(); err == nil {
			sums, err = labstub.ReadSums(dir)
		}
	}
	if err != nil {
		return false, err
	}
	return labstub.Matches(sums, rel, data), nil
}
