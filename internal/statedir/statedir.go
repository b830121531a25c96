// Package statedir locates the directory where the playground keeps the
// learner's progress, logs and scratch data between runs.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// EnvOverride names the environment variable that, when set, is used as the
// state directory as is. Tests set it to a temporary directory.
const EnvOverride = "PLAYGROUND_STATE_DIR"

// Dir returns the state directory, creating it if needed:
// $PLAYGROUND_STATE_DIR, else $XDG_STATE_HOME/playground, else the OS
// equivalent (~/.local/state/playground on Linux, the user config dir
// elsewhere).
func Dir() (string, error) {
	dir, err := path()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create state dir: %w", err)
	}
	if err := CheckPrivate(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// ErrNotPrivate is wrapped by CheckPrivate's errors.
var ErrNotPrivate = errors.New("statedir: directory not private to this user")

// CheckPrivate refuses a directory that another user could have prepared
// or could change: one (or a symlink to one) owned by someone else, or
// writable by group or others. The playground keeps progress, logs and
// etcd's data in such directories, and a directory under a shared /tmp
// may have been created by anyone before the learner's first run. The
// error says what is wrong and how to fix it. Where the system has no
// notion of file owners, it checks nothing.
func CheckPrivate(dir string) error {
	for _, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} {
		fi, err := stat(dir)
		if err != nil {
			return fmt.Errorf("check %s: %w", dir, err)
		}
		if owner, ok := ownerOf(fi); ok && owner != os.Getuid() {
			return fmt.Errorf("%w: %s belongs to user %d, not to you (user %d), so whoever owns it could read or change what the playground keeps there; remove it, or point the playground elsewhere (%s or TMPDIR)",
				ErrNotPrivate, dir, owner, os.Getuid(), EnvOverride)
		}
		if fi.Mode()&os.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 && ownersApply() {
			return fmt.Errorf("%w: other users can write to %s (mode %v); make it yours alone with chmod go-w %s, or remove it",
				ErrNotPrivate, dir, fi.Mode().Perm(), dir)
		}
	}
	return nil
}

func path() (string, error) {
	if d := os.Getenv(EnvOverride); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "playground"), nil
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "freebsd" || runtime.GOOS == "openbsd" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find state dir: %w", err)
		}
		return filepath.Join(home, ".local", "state", "playground"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find state dir: %w", err)
	}
	return filepath.Join(d, "playground"), nil
}
