package grade

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The judge. A sealed run's test binary holds no key: the go command runs
// it through this program (go test -exec, see Supervise), which starts
// it (inside the sandbox where there is one) with the write end of a pipe
// as file descriptor 3. The course's harness (labs/internal/labtest)
// takes that descriptor while it initializes, before any of the lab's
// code runs, and writes what the tests did on it, unsigned. Once the
// binary has ended, the judge signs what came through the pipe with the
// run's key and prints the sealed line that Run checks. The key lives in
// the grader, the supervisor, the go command and the judge, none of which
// runs the learner's code; the lab's code can neither write to the pipe
// (no os, syscall or unsafe in a lab file) nor read the key (no file or
// /proc access: the allowlist, and Landlock's scoping on Linux).
const (
	judgeEnv    = "PLAYGROUND_GRADE_JUDGE" // the run's key, hex
	reportFDEnv = "PLAYGROUND_GRADE_REPORT_FD"
	// maxReport bounds what the judge reads from the pipe.
	maxReport = 1 << 20
)

// judging is set by Supervise: this program can judge a sealed run.
var judging atomic.Bool

// judgeArgs are the go test flags that run the test binary through this
// program, or an error when it cannot judge.
func judgeArgs() ([]string, error) {
	if !judging.Load() {
		return nil, fmt.Errorf("a sealed grading needs grade.Supervise() at the start of main")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("judge: %w", err)
	}
	return []string{"-exec", quoteArg(self)}, nil
}

// quoteArg quotes s for the go command's -exec, which splits on spaces.
func quoteArg(s string) string {
	if !strings.ContainsAny(s, " \t'\"") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}

// judgeMain runs the test binary args[0] with args[1:] and then prints the
// sealed report of what its harness wrote on the pipe. It returns the
// binary's exit status.
func judgeMain(args []string, keyHex string) int {
	key, err := hex.DecodeString(keyHex)
	if len(args) == 0 || err != nil || len(key) < 16 {
		fmt.Fprintln(os.Stderr, "playground-judge: no test binary or no key")
		return 2
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "playground-judge: %v\n", err)
		return 2
	}
	tmp, err := os.MkdirTemp("", "playground-lab-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "playground-judge: %v\n", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	cmd, err := sandboxedCommand(args, tmp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "playground-judge: %v\n", err)
		return 2
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = append(cmd.Env, reportFDEnv+"=3")
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "playground-judge: start the test binary: %v\n", err)
		return 2
	}
	w.Close()
	report := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(r, maxReport+1))
		report <- data
	}()
	cmd.Wait()
	// The harness closes its end once it has written; a process the
	// binary left holding it open must not hold the grading up.
	select {
	case data := <-report:
		printSeal(key, data)
	case <-time.After(2 * time.Second):
	}
	return exitStatus(cmd.ProcessState)
}

// printSeal prints the sealed line for the harness's report, or nothing
// when it sent none (the run then counts as not passed).
func printSeal(key, data []byte) {
	var rep sealReport
	if len(data) == 0 || len(data) > maxReport || json.Unmarshal(data, &rep) != nil {
		return
	}
	body := base64.RawURLEncoding.EncodeToString(data)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(body))
	fmt.Fprintf(os.Stdout, "\n%s%s %s\n", sealPrefix, body, hex.EncodeToString(mac.Sum(nil)))
}

// labEnvNames are the environment entries a test binary gets from the
// go command's (all else is dropped: the grader's own variables, and
// whatever secrets the user's shell holds); prefixes end in "_".
var labEnvNames = []string{
	"PATH", "LANG", "LC_", "TZ", "GORACE", "GODEBUG", "GOMAXPROCS", "GOTRACEBACK", "GOROOT",
	"PLAYGROUND_GRADER_ETCD", "PLAYGROUND_ETCD_", "PLAYGROUND_CLASS", "LABTEST_",
}

// labEnv is the test binary's environment: the names above from env,
// with HOME and TMPDIR in tmp.
func labEnv(env []string, tmp string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		for _, n := range labEnvNames {
			if name == n || (strings.HasSuffix(n, "_") && strings.HasPrefix(name, n)) {
				out = append(out, kv)
				break
			}
		}
	}
	return append(out, "HOME="+tmp, "TMPDIR="+tmp)
}

// plainCommand runs the test binary itself, unsandboxed.
func plainCommand(args []string, tmp string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = labEnv(os.Environ(), tmp)
	return cmd
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
