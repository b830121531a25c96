//go:build linux

package grade

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// schedClock says whether this kernel reports each thread's wait for a
// CPU (/proc/<pid>/task/<tid>/schedstat, CONFIG_SCHED_INFO).
func schedClock() bool {
	_, err := os.Stat("/proc/self/schedstat")
	return err == nil
}

// treeWaits reads how long each thread of pid and of every process under
// it has waited for a CPU, in nanoseconds (schedstat's second field).
func treeWaits(pid int) map[int]uint64 {
	out := map[int]uint64{}
	for _, p := range treeOf(pid) {
		dir := filepath.Join("/proc", strconv.Itoa(p), "task")
		tasks, _ := os.ReadDir(dir)
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
			f := strings.Fields(string(data))
			if err != nil || len(f) < 2 {
				continue
			}
			if w, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				out[tid] = w
			}
		}
	}
	return out
}

// treeOf is pid and the processes under it.
func treeOf(pid int) []int { return append(subtree(childrenUnder(pid), pid), pid) }

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

// quitTests asks every test binary under pid for a stack dump and an exit
// (SIGQUIT, which the Go runtime answers with every goroutine's stack), so
// that a timed-out step shows where the learner's code was.
func quitTests(pid int) {
	for _, p := range descendants(pid) {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p), "exe"))
		if err == nil && strings.HasSuffix(strings.TrimSuffix(exe, " (deleted)"), ".test") {
			syscall.Kill(p, syscall.SIGQUIT)
		}
	}
}
