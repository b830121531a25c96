package progress

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/atomicfile"
)

// Update is how every writer changes the saved progress: under an exclusive
// lock on path's lock file (path + ".lock") it reads the file as it is on
// disk now, lets change edit that record, and writes the result back
// atomically. Two programs on one state directory (two TUIs, a TUI and
// `playground grade`) therefore never overwrite each other's records: each
// edit is applied to the latest file, not to a copy read earlier.
//
// A file that cannot be parsed is moved aside as Load does, and the edit is
// applied to fresh progress. Temporary files left by a writer that was
// killed mid-save are removed while the lock is held, when no live writer
// can be using them. Update returns the progress it wrote.
func Update(path string, change func(*Progress)) (*Progress, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("save progress: %w", err)
	}
	unlock, err := lockFile(path + lockSuffix)
	if err != nil {
		return nil, fmt.Errorf("save progress: lock %s: %w", path+lockSuffix, err)
	}
	defer unlock()
	removeStaleTemps(path)
	p, _ := Load(path, time.Now())
	change(p)
	if err := write(path, p); err != nil {
		return nil, err
	}
	return p, nil
}

// Save merges p into the progress saved at path (see Update and Merge): what
// p records is added, and what another program recorded meanwhile is kept.
// Use Update to read what was merged.
func Save(path string, p *Progress) error {
	_, err := Update(path, func(disk *Progress) { disk.Merge(p) })
	return err
}

// Tidy removes the temporary files that writers killed mid-save left
// beside path, under the writers' lock so that none still being written is
// touched. Programs call it at start; Update does the same before writing.
func Tidy(path string) error {
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil // nothing saved yet, nothing to tidy
	}
	unlock, err := lockFile(path + lockSuffix)
	if err != nil {
		return fmt.Errorf("tidy progress: lock %s: %w", path+lockSuffix, err)
	}
	defer unlock()
	removeStaleTemps(path)
	return nil
}

// lockSuffix names the lock file beside the progress file. The lock file
// itself stays; only the lock on it matters.
const lockSuffix = ".lock"

// tempPattern is the name of a file being written by write.
func tempPattern(path string) string { return atomicfile.TempPattern(path) }

// removeStaleTemps deletes temporary files left by a writer that died
// between creating and renaming them. The caller holds the lock, and
// temporary files are only created under it, so none of them is in use
// where locking works; where it does not (see lockFile), only files older
// than a minute are removed.
func removeStaleTemps(path string) {
	temps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tempPattern(path)))
	for _, t := range temps {
		if !strings.HasPrefix(filepath.Base(t), filepath.Base(path)+".tmp-") {
			continue
		}
		if !lockingWorks {
			fi, err := os.Lstat(t)
			if err != nil || time.Since(fi.ModTime()) < time.Minute {
				continue
			}
		}
		os.Remove(t)
	}
}
