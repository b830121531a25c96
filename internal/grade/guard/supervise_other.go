//go:build !linux

package guard

import (
	"fmt"
	"os"
)

// Supported reports whether this system has what the supervisor needs
// (a subreaper, /proc): only Linux.
const Supported = false

func superviseMain(args []string, limit int64) int {
	fmt.Fprintln(os.Stderr, "playground-supervisor: only on Linux")
	return 2
}

// KeepDescendants does nothing outside Linux (no subreapers).
func KeepDescendants() (end func()) { return func() {} }

// Tree is pid alone outside Linux (no /proc to walk).
func Tree(pid int) []int { return []int{pid} }

// Descendants is none outside Linux.
func Descendants(pid int) []int { return nil }
