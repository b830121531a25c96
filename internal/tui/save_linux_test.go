package tui

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ownership-election/playground/internal/progress"
)

// The same on a real file system that fills up: a 256 KiB tmpfs, filled
// with a file until writes fail with ENOSPC, then emptied. Mounting needs
// root; TestFailedSaveKeepsChanges fakes the failure everywhere else.
func TestFailedSaveOnAFullFileSystem(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): TestFailedSaveKeepsChanges fakes a full disk instead", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	h := newHarness(t, 80, 24, func(o *Options) { o.ProgressPath = filepath.Join(dir, progress.FileName) })
	filler := filepath.Join(dir, "filler")
	fill := func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		chunk := make([]byte, 4096)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("filling the tmpfs: %v", err)
				}
				return
			}
		}
	}
	empty := func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	checkSaveFailure(t, h, fill, empty)
}
