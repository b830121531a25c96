// Package labrun runs the learner's own lab code as an experiment's
// replicas: every lab run is here, above the engine (internal/experiment),
// which it drives as any scenario's script does. It owns the one registry
// of labs with a runner (registry.go: each lab's file, replica program,
// the properties its runs are held to), the build of a lab's replica
// program (the learner's file from labs/NN_*/, or the reference through a
// build overlay, as grading does), the prepared fault schedules
// (schedule.go), the control lines the lab screen sends a run in another
// process (control.go), the replica processes themselves (process.go),
// and each lab's rules (lab05.go ... lab09.go, verdict.go). The parent
// process keeps etcd, the fault proxies, the fenced resource, the history
// and the checker; a replica process (labrun/replica) reports what the
// lab's code did.
package labrun

import (
	"bytes"
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
var ErrNotWritten = errors.New("labrun: the lab is not written yet")

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

// BuildTimeout bounds one build (a cold one compiles etcd's client).
const BuildTimeout = 3 * time.Minute

// Build compiles the replica program of lab l in the checkout at root,
// with the learner's file or, with reference, the solution's. The binary
// is kept in the cache folder and relinked only when what it is built
// from changed.
func Build(ctx context.Context, root string, l Lab, reference bool) (string, error) {
	if !reference {
		if stub, err := isStub(root, l); err == nil && stub {
			return "", fmt.Errorf("%w: labs/%s/%s is the stub as shipped; write it first (README.md in that folder says how)", ErrNotWritten, l.ID, l.File)
		}
		return BuildWith(ctx, root, l, "")
	}
	return BuildWith(ctx, root, l, filepath.Join(root, "solutions", l.ID, l.File))
}

// BuildWith is Build with source (a path) compiled in place of the
// learner's file; "" compiles the learner's file as it is.
func BuildWith(ctx context.Context, root string, l Lab, source string) (string, error) {
	bin, err := binPath(root, l, source)
	if err != nil {
		return "", err
	}
	args := []string{"build", "-o", bin}
	if source != "" {
		ov, cleanup, err := overlay(root, l, source)
		if err != nil {
			return "", err
		}
		defer cleanup()
		args = append(args, "-overlay", ov)
	}
	args = append(args, l.Main)
	bctx, cancel := context.WithTimeout(ctx, BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(bctx, "go", args...)
	cmd.Dir = root
	proctree.Group(cmd) // a cancelled build ends the compilers go started too
	proctree.KillGroupOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if bctx.Err() != nil {
			return "", fmt.Errorf("build lab %s: %w: no result after %s", l.ID, ErrBuildTimeout, BuildTimeout)
		}
		// The compiler quotes the learner's lines.
		return "", &BuildError{Lab: l.ID, Output: sanitize.Text(out.String())}
	}
	return bin, nil
}

// binPath is where the replica program of l is kept: one file per
// checkout, lab and source (the learner's file, or what replaces it).
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

// overlay writes the go overlay that puts source in the learner's file's
// place.
func overlay(root string, l Lab, source string) (string, func(), error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", nil, fmt.Errorf("overlay %s: %w", source, err)
	}
	return grade.WriteOverlay(root, map[string]string{filepath.Join("labs", l.ID, l.File): abs})
}

// isStub reports whether the learner's file is the stub as shipped, by
// its git blob hash in labs/stubs.sum.
func isStub(root string, l Lab) (bool, error) {
	return labstub.Untouched(root, "labs/"+l.ID+"/"+l.File)
}
