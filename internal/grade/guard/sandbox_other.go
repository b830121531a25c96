//go:build !linux

package guard

import "os/exec"

// sandboxedCommand runs the test binary itself: only Linux has Landlock.
func sandboxedCommand(args []string, tmp string) (*exec.Cmd, error) {
	return plainCommand(args, tmp), nil
}

func sandboxMain(args []string, spec string) int { return 2 }

// LandlockABI is 0: only Linux has Landlock.
func LandlockABI() int { return 0 }
