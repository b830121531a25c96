//go:build windows

package embedetcd

import "golang.org/x/sys/windows"

// diskFree returns the bytes the user may still write on dir's volume.
func diskFree(dir string) (uint64, bool) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, false
	}
	var free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, nil, nil); err != nil {
		return 0, false
	}
	return free, true
}
