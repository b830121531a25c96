//go:build !linux

package cli

import "os/exec"

// limitCPU is a no-op where prlimit is not available; the regrade's
// wall-clock limit still bounds it.
func limitCPU(pid int, seconds uint64) {}

// ownGroup leaves cmd as it is; its context still ends it.
func ownGroup(cmd *exec.Cmd) {}

// killGroup has no group to end here.
func killGroup(cmd *exec.Cmd) {}
