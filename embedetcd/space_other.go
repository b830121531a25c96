//go:build !unix && !windows

package embedetcd

// diskFree cannot tell here; etcd's own error is all there is.
func diskFree(string) (uint64, bool) { return 0, false }
