//go:build windows

package progress

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockingWorks says lockFile gives real mutual exclusion here.
const lockingWorks = true

// lockFile takes an exclusive LockFileEx lock on name, creating the file if
// needed; Windows drops it when the process ends.
func lockFile(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	h := windows.Handle(f.Fd())
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		windows.UnlockFileEx(h, 0, 1, 0, ol)
		f.Close()
	}, nil
}
