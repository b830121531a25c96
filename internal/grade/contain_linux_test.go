package grade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spawned reads what the spawn fixture wrote: the test binary's pid, the
// two sleepers' pids and the file it left in $TMPDIR.
func spawned(t *testing.T, file string) ([]int, string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, ""
	}
	f := strings.Fields(string(data))
	if len(f) != 4 {
		return nil, ""
	}
	var pids []int
	for _, s := range f[:3] {
		pid, _ := strconv.Atoi(s)
		pids = append(pids, pid)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	return pids, f[3]
}

// A passing run ends every process its test started, the one that left
// its process group too, and removes what it left in $TMPDIR.
func TestGradingEndsEveryProcessItStarted(t *testing.T) {
	if !supervising.Load() {
		t.Fatal("this test binary does not supervise its gradings")
	}
	o := fixture(t, "spawn")
	file := filepath.Join(t.TempDir(), "spawned")
	o.Env = append(o.Env, "SPAWN_FILE="+file)
	res, err := Run(context.Background(), o)
	if err != nil || !res.Passed {
		t.Fatalf("run: %v %+v", err, res)
	}
	pids, left := spawned(t, file)
	if pids == nil {
		t.Fatal("the fixture did not report its processes")
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived the grading", pid)
		}
	}
	if _, err := os.Stat(left); err == nil {
		t.Errorf("%s is still in the run's $TMPDIR", left)
	}
}

// A test binary that allocates past the limit is stopped, with a message
// that says why.
func TestGradingStopsAtTheMemoryLimit(t *testing.T) {
	o := fixture(t, "hog")
	o.MemoryLimit = 256 << 20
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || !strings.Contains(res.Message, "your code used more than 256 MiB") {
		t.Fatalf("passed %v, message %q", res.Passed, res.Message)
	}
	if got := memoryMessage(DefaultMemoryLimit); !strings.Contains(got, "more than 1 GiB") {
		t.Errorf("the default limit reads %q", got)
	}
}

// TestGraderKilledLeavesNothing runs a program (this test binary again)
// that grades a lab whose test starts processes and hangs, kills it with
// SIGKILL as a learner might kill the TUI, and checks that within 5 s no
// process of the grading is left and its $TMPDIR is gone.
func TestGraderKilledLeavesNothing(t *testing.T) {
	if os.Getenv("GRADE_KILLED_CHILD") != "" {
		o := Options{Dir: os.Getenv("GRADE_KILLED_DIR"), Pkg: "./labs/spawn", BinDir: os.Getenv("GRADE_KILLED_BIN"),
			Env: []string{"GOWORK=off", "GOFLAGS=-mod=mod", "SPAWN_HANG=1", "SPAWN_FILE=" + os.Getenv("GRADE_KILLED_FILE")}, Timeout: time.Hour}
		Run(context.Background(), o)
		return
	}
	o := fixture(t, "spawn")
	file := filepath.Join(t.TempDir(), "spawned")
	cmd := exec.Command(os.Args[0], "-test.run=^TestGraderKilledLeavesNothing$")
	cmd.Env = append(os.Environ(), "GRADE_KILLED_CHILD=1", "GRADE_KILLED_DIR="+o.Dir, "GRADE_KILLED_BIN="+o.BinDir, "GRADE_KILLED_FILE="+file)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pids []int
	var left string
	for deadline := time.Now().Add(3 * time.Minute); pids == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the grading never started its processes")
		}
		pids, left = spawned(t, file)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	for _, pid := range pids {
		for alive(pid) {
			if time.Since(killed) > 5*time.Second {
				t.Fatalf("process %d of the grading still runs 5 s after its grader was killed", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, err := os.Stat(left); err == nil; _, err = os.Stat(left) {
		if time.Since(killed) > 5*time.Second {
			t.Fatalf("%s is still there 5 s after the grader was killed", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("everything ended %v after the grader was killed", time.Since(killed).Round(time.Millisecond))
}
