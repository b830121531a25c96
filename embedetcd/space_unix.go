//go:build unix

package embedetcd

import "golang.org/x/sys/unix"

// diskFree returns the bytes an unprivileged user may still write in
// dir's file system.
func diskFree(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
