//go:build linux

package grade

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ownership-election/playground/internal/proctree"
)

const supervisorSupported = true

// supervisedCommand turns cmd, the go command ready to start, into its
// supervisor's command: this program with supervisorEnv set and the go
// command as its arguments, reading a pipe on standard input that only
// closes when the grading is over or this program dies. Cancelling asks
// the supervisor to end everything (SIGTERM). started is called once the
// supervisor runs, done once it was waited for.
func supervisedCommand(cmd *exec.Cmd, limit int64) (started, done func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("supervise: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("supervise: %w", err)
	}
	cmd.Args = append([]string{self, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
	cmd.Env = append(cmd.Env, supervisorEnv+"="+strconv.FormatInt(limit, 10))
	cmd.Stdin = r
	proctree.Group(cmd)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	return func() { r.Close() }, func() { w.Close() }, nil
}

// superviseMain is the supervisor: it runs args (the go command) with a
// private $TMPDIR, and ends every descendant once the go command ends,
// its input closes, it is signalled, or the test binaries' memory passes
// limit. It returns the go command's exit status.
func superviseMain(args []string, limit int64) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "playground-supervisor: no command")
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "playground-supervisor: subreaper: %v\n", err)
	}
	tmp, err := os.MkdirTemp("", "playground-grade-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "playground-supervisor: %v\n", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(withoutEnv(os.Environ(), supervisorEnv), "TMPDIR="+tmp)
	proctree.DieWithParent(cmd, syscall.SIGKILL)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "playground-supervisor: %v\n", err)
		return 2
	}
	code := supervise(cmd, limit)
	endAll()
	return code
}

// supervise waits for cmd, or for a reason to stop it, and returns the
// status to exit with.
func supervise(cmd *exec.Cmd, limit int64) int {
	exited := make(chan int, 1)
	go func() {
		cmd.Wait()
		exited <- exitStatus(cmd.ProcessState)
	}()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	orphaned := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).WriteTo(discard{}) // returns when the grader is gone
		close(orphaned)
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case code := <-exited:
			return code
		case <-stop:
			return stopped(exited, 143)
		case <-orphaned:
			return stopped(exited, 143)
		case <-tick.C:
			if used := labMemory(cmd.Process.Pid); limit > 0 && used > limit {
				fmt.Fprintf(os.Stderr, "\n%s%d bytes used, limit %d\n", overMemory, used, limit)
				return stopped(exited, 137)
			}
		}
	}
}

// stopped kills every descendant and waits for the go command.
func stopped(exited <-chan int, code int) int {
	killDescendants()
	<-exited
	return code
}

// endAll kills what is left and reaps it, until no descendant remains.
func endAll() {
	for range 100 {
		if killDescendants() == 0 {
			break
		}
		for {
			if _, err := syscall.Wait4(-1, nil, 0, nil); errors.Is(err, syscall.ECHILD) {
				break
			}
		}
	}
	for {
		if _, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); err != nil {
			return
		}
	}
}

// killDescendants sends SIGKILL to every descendant and returns how many
// there were.
func killDescendants() int {
	ds := descendants(os.Getpid())
	for _, pid := range ds {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(ds)
}

// descendants lists the processes under pid (its children, theirs, ...).
func descendants(pid int) []int { return subtree(processChildren(), pid) }

// processChildren maps each process to its children, from /proc.
func processChildren() map[int][]int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := parentOf(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	return children
}

// subtree lists the processes under pid in children, pid excluded.
func subtree(children map[int][]int, pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads a process's parent from /proc/<pid>/stat (the field after
// the command name, which may itself hold spaces and parentheses).
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

// labMemory is the resident memory of every process that runs the
// learner's code, whatever it is called: the subtree of each judge (this
// program, started by the go command: the sandbox step, the test binary
// and all it starts), of each test binary the go command runs itself (a
// run without the judge), and every process left to this subreaper by a
// parent that ended (anything but the go command, goPid). The go
// command, the compiler and the linker are the course's and do not
// count. Resident memory, not address space: a race-detector binary
// reserves 1.9 GB of it at start (measured here) with 19 MB resident, so
// RLIMIT_AS would stop it at once.
func labMemory(goPid int) int64 {
	children := childrenUnder(os.Getpid())
	self, _ := os.Executable()
	var roots []int
	for _, c := range children[os.Getpid()] {
		if c != goPid {
			roots = append(roots, c)
		}
	}
	for _, pid := range subtree(children, goPid) {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		exe = strings.TrimSuffix(exe, " (deleted)")
		if err == nil && pid != goPid && (exe == self || strings.HasSuffix(exe, ".test")) {
			roots = append(roots, pid)
		}
	}
	seen := map[int]bool{}
	var total int64
	for _, r := range roots {
		for _, pid := range append(subtree(children, r), r) {
			if !seen[pid] {
				seen[pid] = true
				total += residentBytes(pid)
			}
		}
	}
	return total
}

// residentBytes is a process's resident memory (0 once it is gone).
func residentBytes(pid int) int64 {
	statm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "statm"))
	if f := strings.Fields(string(statm)); err == nil && len(f) > 1 {
		n, _ := strconv.ParseInt(f[1], 10, 64)
		return n * int64(os.Getpagesize())
	}
	return 0
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// KeepDescendants makes this process the subreaper of everything it
// starts from now on: a process whose parent ends (a supervisor killed,
// a daemon that double-forked) is reparented here instead of to init.
// The returned end kills and reaps every descendant left. Only for a
// process that exists to grade (class verify's regrade child): it ends
// all its descendants, whoever started them.
func KeepDescendants() (end func()) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return func() {}
	}
	return endAll
}
