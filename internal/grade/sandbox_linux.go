//go:build linux

package grade

import (
	"fmt"

	"github.com/ownership-election/playground/internal/grade/guard"
)

// SandboxNote says, in a sentence, what the sandbox around lab code
// lacks on this machine; "" when it has all of it (Landlock ABI 6 or
// later: files, TCP ports, signals and tracing). The sandbox itself is
// the guard program's (internal/grade/guard).
func SandboxNote() string {
	switch v := guard.LandlockABI(); {
	case v < 1:
		return "this kernel has no Landlock (not built in, or not in the lsm= boot list), so lab code runs with your user's access to files and the network; only the import allowlist guards the grade"
	case v < 4:
		return fmt.Sprintf("this kernel's Landlock (ABI %d) restricts files but not the network: lab code may connect anywhere while it is graded", v)
	case v < 6:
		return fmt.Sprintf("this kernel's Landlock (ABI %d) cannot keep lab code from signalling other processes of your user", v)
	}
	return ""
}
