//go:build unix

package embedetcd

import (
	"os"
	"syscall"
)

// lockOwn takes the lock that marks a data dir as in use; the kernel drops
// it when the process dies, however it dies.
func lockOwn(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// isStale reports whether nobody holds the lock in f.
func isStale(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
