//go:build linux

package guard

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
)

// Containment. On Linux a grading's go command runs under a supervisor:
// this program started with SupervisorEnv, as a child subreaper, so that
// every process the grading starts stays its descendant even when it
// calls setsid or its parent exits. When the go command ends, when the
// grading is stopped, or when the program that started it dies (even by
// kill -9: the supervisor's standard input closes), the supervisor kills
// every process left, removes the private temporary folder it gave the
// run ($TMPDIR: etcd data, test files) and exits. It also stops the run
// when the resident memory of all the processes that run the learner's
// code (labMemory: the test binary and whatever it started) passes the
// limit. Nothing here changes the state of the program that grades: the
// subreaper flag and the polling belong to the supervisor process.

// Supported reports whether this system has what the supervisor needs
// (a subreaper, /proc).
const Supported = true

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
	cmd.Env = append(withoutEnv(os.Environ(), SupervisorEnv), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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
				fmt.Fprintf(os.Stderr, "\n%s%d bytes used, limit %d\n", OverMemory, used, limit)
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

// Tree is pid and the processes under it (the grader's run clock reads
// their threads).
func Tree(pid int) []int { return append(subtree(childrenUnder(pid), pid), pid) }

// Descendants lists the processes under pid, found by reading every
// process's parent (slower than Tree, and it misses none being born).
func Descendants(pid int) []int { return descendants(pid) }

// childrenUnder maps pid and each process under it to its children,
// found from each thread's children list (/proc/<pid>/task/<tid>/children):
// a walk of the few processes of a grading instead of a read of every
// process's stat file, which cost 7 ms of CPU a sample here. Without those
// lists (a kernel without CONFIG_PROC_CHILDREN) it reads every process's
// parent.
func childrenUnder(pid int) map[int][]int {
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children")); err != nil {
		return processChildren()
	}
	children := map[int][]int{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		dir := filepath.Join("/proc", strconv.Itoa(p), "task")
		tasks, _ := os.ReadDir(dir)
		for _, t := range tasks {
			data, _ := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
			for _, f := range strings.Fields(string(data)) {
				if c, err := strconv.Atoi(f); err == nil {
					children[p] = append(children[p], c)
					queue = append(queue, c)
				}
			}
		}
	}
	return children
}
