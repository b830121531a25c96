//go:build unix

package labtest

import "syscall"

// closeOnExec keeps fd (the judge's pipe) out of any program the tests
// start, so that only this process can write the report.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }
