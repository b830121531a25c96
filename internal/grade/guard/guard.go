// Package guard is the small program that stands around a lab's code
// while it is graded: the supervisor of a grading's go command, the
// judge that seals the harness's report, and the sandbox step that
// restricts the test binary before it starts. internal/grade builds it
// once from the course's own copy (cmd internal/grade/guardcmd) instead
// of starting the whole playground for each of these jobs: the
// playground is a 53 MB program whose initialisation alone costs 75 ms
// of CPU, and a grading starts these helpers six times. So this package
// imports only the standard library, golang.org/x/sys and go-landlock.
//
// Each role reads its settings from the environment variable that names
// it (Main); the grader sets exactly one.
package guard

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// The environment variables that start a role, and what they carry.
const (
	// SupervisorEnv starts the supervisor (contain); its value is the
	// memory limit in bytes.
	SupervisorEnv = "PLAYGROUND_GRADE_SUPERVISOR"
	// SandboxEnv starts the sandbox step; its value is the sandbox's
	// spec, JSON.
	SandboxEnv = "PLAYGROUND_GRADE_SANDBOX"
	// JudgeEnv starts the judge; its value is the run's key, hex.
	JudgeEnv = "PLAYGROUND_GRADE_JUDGE"
	// ReportFDEnv tells the test binary's harness which file descriptor
	// is the judge's pipe.
	ReportFDEnv = "PLAYGROUND_GRADE_REPORT_FD"
)

// SealPrefix begins the judge's sealed line (internal/grade checks it).
const SealPrefix = "playground-seal v1 "

// OverMemory begins the line the supervisor writes on standard error
// when it stopped a run for its memory.
const OverMemory = "playground-supervisor: over the memory limit: "

// Main runs the role the environment names, with args as the command
// line after the program's name, and returns the status to exit with.
func Main(args []string) int {
	if limit, ok := os.LookupEnv(SupervisorEnv); ok {
		var n int64
		fmt.Sscan(limit, &n)
		return superviseMain(args, n)
	}
	if spec, ok := os.LookupEnv(SandboxEnv); ok {
		return sandboxMain(args, spec)
	}
	if key, ok := os.LookupEnv(JudgeEnv); ok {
		return judgeMain(args, key)
	}
	fmt.Fprintln(os.Stderr, "playground-guard: started without a role; internal/grade starts this program, not people")
	return 2
}

// exitStatus is the status a process that ended as ps did exits with:
// its own, or 128 plus the signal that killed it.
func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return 2
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// withoutEnv is env without the entry for name.
func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}
