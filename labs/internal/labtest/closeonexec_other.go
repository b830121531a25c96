//go:build !unix

package labtest

// closeOnExec does nothing where file descriptors are not inherited by
// number.
func closeOnExec(fd int) {}
