package guard

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
	"time"
)

// The judge. A sealed run's test binary holds no key: the go command runs
// it through this program (go test -exec), which starts it (inside the
// sandbox where there is one) with the write end of a pipe as file
// descriptor 3. The course's harness (labs/internal/labtest) takes that
// descriptor while it initializes, before any of the lab's code runs,
// and writes what the tests did on it, unsigned. Once the binary has
// ended, the judge signs what came through the pipe with the run's key
// and prints the sealed line that internal/grade checks. The key lives
// in the grader, the supervisor, the go command and the judge, none of
// which runs the learner's code; the lab's code can neither write to the
// pipe (no os, syscall or unsafe in a lab file) nor read the key (no file
// or /proc access: the allowlist, and Landlock's scoping on Linux).

// maxReport bounds what the judge reads from the pipe.
const maxReport = 1 << 20

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
	cmd.Env = append(cmd.Env, ReportFDEnv+"=3")
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
	var rep struct {
		Code  int               `json:"code"`
		Tests []json.RawMessage `json:"tests"`
	}
	if len(data) == 0 || len(data) > maxReport || json.Unmarshal(data, &rep) != nil {
		return
	}
	body := base64.RawURLEncoding.EncodeToString(data)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(body))
	fmt.Fprintf(os.Stdout, "\n%s%s %s\n", SealPrefix, body, hex.EncodeToString(mac.Sum(nil)))
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
