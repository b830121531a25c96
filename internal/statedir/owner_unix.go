//go:build unix

package statedir

import (
	"os"
	"syscall"
)

// ownerOf returns the user id that owns fi's file.
func ownerOf(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// ownersApply says permission bits mean what they say here.
func ownersApply() bool { return true }
