// Package atomicfile writes a file so that a reader, or a crash, sees
// either the old content or the new one, never a mix: the data goes to a
// temporary file in the same folder, is synced, and is renamed over the
// target. The learner's progress and the lab screen's stub reset both
// write through it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// TempPattern is the os.CreateTemp pattern of the temporary files Write
// makes for path: "<name>.tmp-*" in the same folder. A writer killed
// between creating and renaming leaves one behind; callers that tidy up
// look for this pattern.
func TempPattern(path string) string { return filepath.Base(path) + ".tmp-*" }

// Write replaces path with data, with the given permissions.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), TempPattern(path))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return fmt.Errorf("set the mode of %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	ok = true
	return nil
}
