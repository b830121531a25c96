//go:build unix

package progress

import (
	"os"
	"syscall"
)

// lockingWorks says lockFile gives real mutual exclusion here.
const lockingWorks = true

// lockFile takes an exclusive flock on name, creating the file if needed,
// and returns the function that releases it. The kernel drops the lock when
// the process dies, however it dies, so a killed writer never blocks the
// next one.
func lockFile(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		// A lock file this user may only read still serves for flock.
		var rerr error
		if f, rerr = os.Open(name); rerr != nil {
			return nil, err
		}
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
