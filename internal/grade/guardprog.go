package grade

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// The guard program (internal/grade/guard) is built from the course's own
// copy, in the course's build folder (Course.Dir), the first time a
// grading needs it, and kept there: a folder named by the course's
// content, so a new course builds a new guard. It is the same trust as
// the harness and tests built there. Building it takes the go command a
// few seconds once; each grading then starts it six times at a few
// milliseconds a start, where the playground itself took 0.1 s of CPU
// each (issue 34: grading with the sandbox within 10% of without).

// guardBuildTimeout bounds the build of the guard program: compiling
// golang.org/x/sys cold on a busy two-core machine takes a minute.
const guardBuildTimeout = 5 * time.Minute

// guardBuilding lets one grading of this process build it at a time.
var guardBuilding sync.Mutex

// guardProgram is the path of the guard program, built when missing
// with the go command goCmd. A guard that cannot be built is an error
// that says so: nothing is graded without the supervisor, the judge and
// the sandbox.
func guardProgram(goCmd string) (string, error) {
	guardBuilding.Lock()
	defer guardBuilding.Unlock()
	dir, err := Builtin().Dir()
	if err != nil {
		return "", fmt.Errorf("the grading's guard program: %w", err)
	}
	name := "playground-guard"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	prog := filepath.Join(dir, "bin", name)
	if _, err := os.Stat(prog); err != nil {
		if err := buildGuard(dir, goCmd, prog); err != nil {
			return "", err
		}
	}
	return prog, nil
}

// buildGuard builds the guard program into prog: into a temporary file
// first, renamed once complete, so that a build cut short (or a second
// process building at once) never leaves half a program under its name.
func buildGuard(dir, goCmd, prog string) error {
	if goCmd == "" {
		goCmd = "go"
	}
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		return guardError(dir, err, "")
	}
	tmp := fmt.Sprintf("%s.new-%d", prog, os.Getpid())
	defer os.Remove(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), guardBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-ldflags=-s -w", "-o", tmp, "./internal/grade/guardcmd")
	cmd.Dir = dir
	cmd.Env = guardBuildEnv(os.Environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return guardError(dir, err, out.String())
	}
	if err := os.Rename(tmp, prog); err != nil {
		return guardError(dir, err, "")
	}
	return nil
}

// guardBuildEnv is env for building the guard for this machine: a static
// program (no cgo, so the sandbox need not let it load libc), the
// course's go.mod as it is, whatever the user's shell sets for their own
// builds.
func guardBuildEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GOFLAGS", "GOOS", "GOARCH", "CGO_ENABLED":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "CGO_ENABLED=0", "GOFLAGS=-mod=readonly", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
}

func guardError(dir string, err error, output string) error {
	msg := fmt.Sprintf("could not build the grading's guard program (the supervisor, judge and sandbox around lab code; nothing is graded without it) in %s: %v", dir, err)
	if output = strings.TrimSpace(output); output != "" {
		msg += "\n" + output
	}
	return fmt.Errorf("%s", msg)
}
