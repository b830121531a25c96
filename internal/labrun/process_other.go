//go:build unix && !linux

package labrun

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
