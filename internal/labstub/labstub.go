// Package labstub knows a lab's stub file as the course shipped it: it
// tells whether the learner's file is still that stub (by its git blob
// hash in labs/stubs.sum, for lab runs and labcheck), and puts it back,
// keeping the learner's code aside first (the lab screen's reset).
package labstub

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/atomicfile"
)

// ErrNoOriginal says neither the catalogue nor git holds the stub as
// shipped.
var ErrNoOriginal = errors.New("labstub: no original copy of the stub")

// Original is the stub labs/<rel> (rel is "<lab id>/<file>") as shipped:
// the catalogue's copy first (what this binary embeds), else the last
// commit of the checkout at root.
func Original(catalog fs.FS, root, rel string) ([]byte, error) {
	if catalog != nil {
		if b, err := fs.ReadFile(catalog, rel); err == nil {
			return b, nil
		}
	}
	c := exec.Command("git", "show", "HEAD:labs/"+rel)
	c.Dir = root
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("%w (git show: %v %s)", ErrNoOriginal, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Reset writes orig over the file at path after keeping its content in
// path.bak-<at> (a suffix the go tool does not compile; -2, -3... when
// taken); nothing is overwritten before that copy is on disk. It returns
// the backup's path, or "" when there was nothing to keep (no file, or
// the file already was the original).
func Reset(path string, orig []byte, at time.Time) (string, error) {
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read your code: %w", err)
	}
	backup := ""
	if err == nil {
		if bytes.Equal(cur, orig) {
			return "", nil
		}
		if backup, err = keep(path, cur, at.Format("20060102-150405")); err != nil {
			return "", err
		}
	}
	if err := atomicfile.Write(path, orig, 0o644); err != nil {
		return backup, fmt.Errorf("write the original stub: %w", err)
	}
	return backup, nil
}

// keep writes cur to the first free path.bak-stamp[-N].
func keep(path string, cur []byte, stamp string) (string, error) {
	backup := path + ".bak-" + stamp
	for i := 2; ; i++ {
		if _, err := os.Stat(backup); errors.Is(err, fs.ErrNotExist) {
			break
		}
		backup = fmt.Sprintf("%s.bak-%s-%d", path, stamp, i)
	}
	if err := atomicfile.Write(backup, cur, 0o644); err != nil {
		return "", fmt.Errorf("keep your code aside: %w", err)
	}
	return backup, nil
}
