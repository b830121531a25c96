// Package statedir locates the directory where the playground keeps the
// learner's progress, logs and scratch data between runs.
package statedir

import (
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
	return dir, nil
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
