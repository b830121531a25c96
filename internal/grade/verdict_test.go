package grade

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/testwait"
)

// A step that ends the test binary with exit status 0 did not pass, nor
// did the steps after it: test2json alone would call it passed.
func TestRunEarlyExitIsNotAPass(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "exit0"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.Completed {
		t.Fatalf("Passed=%v Completed=%v for a binary that exited mid-step", res.Passed, res.Completed)
	}
	steps := res.Steps([]string{"TestStep1_Fine", "TestStep2_Exits", "TestStep3_After"})
	if steps[0].Status != Pass || steps[1].Status != NotRun || steps[2].Status != NotRun {
		t.Errorf("steps = %s, %s, %s; want pass, not run, not run", steps[0].Status, steps[1].Status, steps[2].Status)
	}
	if !strings.Contains(res.Message, "exited during step 2 (TestStep2_Exits)") {
		t.Errorf("Message = %q, want it to name step 2 and say the binary exited", res.Message)
	}
}

func TestRunKilledBinary(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "killed"))
	if err != nil {
		t.Fatal(err)
	}
	steps := res.Steps([]string{"TestStep1_Fine", "TestStep2_Killed"})
	if res.Passed || steps[0].Status != Pass || steps[1].Status != NotRun {
		t.Fatalf("Passed=%v steps=%s, %s; want not passed, pass, not run", res.Passed, steps[0].Status, steps[1].Status)
	}
	if !strings.Contains(res.Message, "step 2") {
		t.Errorf("Message = %q, want it to name step 2", res.Message)
	}
}

// A hang before any test starts (package init, or the harness's
// TestMain) is out of the testing package's alarm: the grader stops it.
func TestRunHangBeforeTheFirstStep(t *testing.T) {
	for _, lab := range []string{"inithang", "mainhang"} {
		t.Run(lab, func(t *testing.T) {
			o := fixture(t, lab)
			o.Timeout = 2 * time.Second
			start := time.Now()
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			// The grader stops it at its timeout plus runSlack, after the
			// build; the next mechanism that would end it is the build
			// grace's backstop, minutes later. The bound sits between the
			// two: room for a -race build on a busy machine (17.9 s seen
			// at load 20), still failing a grader that left it to the
			// backstop.
			if d, bound := time.Since(start), o.Timeout+runSlack+DefaultBuildGrace/3; d > bound {
				t.Errorf("the hang was stopped after %v (bound %v)", d, bound)
			}
			if !res.TimedOut || res.Passed {
				t.Fatalf("TimedOut=%v Passed=%v", res.TimedOut, res.Passed)
			}
			if !strings.Contains(res.Message, "before step 1 started") {
				t.Errorf("Message = %q, want it to say nothing started", res.Message)
			}
			if s := res.Steps([]string{"TestStep1_Never"}); s[0].Status != NotRun {
				t.Errorf("step 1 = %s, want not run", s[0].Status)
			}
		})
	}
}

func TestRunSynctestDeadlockMessage(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "deadlock"))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Steps([]string{"TestStep1_Fine", "TestStep2_Takes"})
	if s[1].Status != Fail {
		t.Fatalf("step 2 = %s, want fail", s[1].Status)
	}
	f := strings.Join(s[1].Failure, "\n")
	if !strings.Contains(f, "Your code blocked forever in step 2") {
		t.Errorf("failure lacks the plain statement:\n%s", f)
	}
	if !strings.Contains(f, "deadlock.go:") || !strings.Contains(f, "(*Queue).Take") {
		t.Errorf("failure does not show the stuck goroutine in the learner's code:\n%s", f)
	}
	if strings.Contains(f, "testing.tRunner") || strings.Contains(f, "[recovered") || strings.Count(f, "  goroutine ") != 1 {
		t.Errorf("failure shows more than the one relevant goroutine:\n%s", f)
	}
}

func TestRunGoexitFromSubtestMessage(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "goexit"))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Steps([]string{"TestStep1_Helper"})
	f := strings.Join(s[0].Failure, "\n")
	if s[0].Status != Fail || !strings.Contains(f, "the lock was never released") {
		t.Fatalf("step 1 = %s with %q, want fail with the check's message", s[0].Status, f)
	}
	if strings.Contains(f, "panic(nil) or runtime.Goexit") || strings.Contains(f, "goroutine ") {
		t.Errorf("failure still shows the testing package's panic:\n%s", f)
	}
}

// Grading keeps a bounded head and tail of what a step prints, so memory
// stays small however much the learner's code prints.
func TestRunBoundedOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 400,000 lines")
	}
	o := fixture(t, "noisy")
	o.Env = append(o.Env, "NOISY_LINES=200000")
	// The step must print all its lines and fail at the end, which took
	// over the default 25 s under -race on a busy machine; what is
	// measured here is memory, not time.
	o.Timeout = 5 * time.Minute
	if err := Warm(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	})
	res, err := Run(context.Background(), o)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	grown := int64(peak) - int64(base.HeapAlloc)
	t.Logf("heap grew by %d MB at most while grading 400,000 printed lines", grown>>20)
	if grown > 60<<20 {
		t.Errorf("grading a chatty step grew the heap by %d MB, want a bounded amount", grown>>20)
	}
	s := res.Steps([]string{"TestStep1_Chatty"})
	if s[0].Status != Fail {
		t.Fatalf("step = %s, want fail", s[0].Status)
	}
	f := s[0].Failure
	if n := len(f); n > headLines+tailLines+2 {
		t.Errorf("kept %d lines of output", n)
	}
	joined := strings.Join(f, "\n")
	if !strings.Contains(joined, "lines of output not kept") || !strings.Contains(joined, "the chatty step fails at the end") {
		t.Errorf("failure lacks the note or the final message (the tail):\n%s", strings.Join(f[len(f)-5:], "\n"))
	}
}

// Cancelling a grading (quitting the TUI, Ctrl-C of playground grade)
// ends the test binary too, not only the go command.
func TestRunCancelLeavesNoProcess(t *testing.T) {
	o := fixture(t, "pidhang")
	pidFile := filepath.Join(t.TempDir(), "pid")
	o.Env = append(o.Env, "PIDHANG_FILE="+pidFile)
	o.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, o)
		done <- err
	}()
	var pid int
	if !testwait.For(2*time.Minute, func() bool {
		if data, err := os.ReadFile(pidFile); err == nil && len(data) > 0 {
			pid, _ = strconv.Atoi(string(data))
		}
		return pid != 0
	}) {
		cancel()
		t.Fatal("the test binary never started")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled run returned no error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// The binary's parent (go test) is gone; once killed it is reaped by
	// init. Give that a moment.
	if !testwait.For(5*time.Second, func() bool { return !alive(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the test binary (pid %d) still runs after the grading was cancelled", pid)
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(data))
	return len(f) > 2 && f[2] != "Z"
}

// TestStopAllAtExit runs a program (this test binary again) that starts a
// grading of a hanging lab, then ends the way the TUI does on quit:
// StopAll, then exit. The test binary it graded must not outlive it.
func TestStopAllAtExit(t *testing.T) {
	if os.Getenv("GRADE_STOPALL_CHILD") != "" {
		return
	}
	o := fixture(t, "pidhang")
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run=^TestStopAllChild$")
	cmd.Env = append(os.Environ(), "GRADE_STOPALL_CHILD=1", "PIDHANG_FILE="+pidFile, "PIDHANG_DIR="+o.Dir, "PIDHANG_BIN="+o.BinDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the graded binary never started: %v\n%s", err, out)
	}
	pid, _ := strconv.Atoi(string(data))
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the graded test binary (pid %d) outlived the program that graded it", pid)
		}
	}
}

func TestStopAllChild(t *testing.T) {
	if os.Getenv("GRADE_STOPALL_CHILD") == "" {
		t.Skip("run by TestStopAllAtExit")
	}
	o := Options{Dir: os.Getenv("PIDHANG_DIR"), Pkg: "./labs/pidhang", Env: []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, BinDir: os.Getenv("PIDHANG_BIN"), Timeout: time.Hour}
	go Run(context.Background(), o)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(os.Getenv("PIDHANG_FILE")); err == nil && len(data) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the graded binary never started")
		}
	}
	StopAll()
	os.Exit(0)
}

// The stall guard's panic (a bubble whose fake clock can never move) is
// a failed step with the guard's report, not a crash of the grader.
func TestRunStallMessage(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "stall"))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Steps([]string{"TestStep1_Fine", "TestStep2_Polls", "TestStep3_NeverReached"})
	if s[0].Status != Pass || s[1].Status != Fail || s[2].Status != NotRun {
		t.Fatalf("steps = %s, %s, %s; want pass, fail, not run", s[0].Status, s[1].Status, s[2].Status)
	}
	if want := "step 2 (TestStep2_Polls) is stuck: Run never waited: a goroutine"; !strings.HasPrefix(res.Message, want) {
		t.Errorf("Message = %q, want it to start %q", res.Message, want)
	}
	f := strings.Join(s[1].Failure, "\n")
	if !strings.HasPrefix(f, "Run never waited") || !strings.Contains(f, "Where your code is:\n  goroutine 9") || !strings.Contains(f, "stall.go:11") {
		t.Errorf("failure lacks the report:\n%s", f)
	}
	if strings.Contains(f, "panic:") || strings.Contains(f, "stall_test.go") {
		t.Errorf("failure keeps the panic's framing or the guard's own stack:\n%s", f)
	}
}
