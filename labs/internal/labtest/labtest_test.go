package labtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMainLowersTheDefaultTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	start := time.Now()
	out, err := exec.Command("go", "test", "-count=1", "./testdata/hang").CombinedOutput()
	if err == nil {
		t.Fatalf("a test that never ends passed:\n%s", out)
	}
	if !strings.Contains(string(out), "test timed out after 2s") || !strings.Contains(string(out), "TestStep1_Forever") {
		t.Fatalf("want go test's timeout report naming the test, got:\n%s", out)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("took %v", d)
	}
}

func TestMainKeepsAnExplicitTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	out, _ := exec.Command("go", "test", "-count=1", "-timeout=3s", "./testdata/hang").CombinedOutput()
	if !strings.Contains(string(out), "test timed out after 3s") {
		t.Fatalf("an explicit -timeout 3s was not kept:\n%s", out)
	}
}

// An init that never returns is out of reach of the testing package's
// timeout; the guard reports it (with where it is stuck) instead of
// letting go test wait ten minutes.
func TestInitGuardStopsAHangingInit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	start := time.Now()
	cmd := exec.Command("go", "test", "-count=1", "./testdata/inithang")
	cmd.Env = append(os.Environ(), initBudgetEnv+"=2s")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a package whose init never returns passed:\n%s", out)
	}
	if !strings.Contains(string(out), "did not finish initializing within 2s") || !strings.Contains(string(out), "inithang.init") {
		t.Fatalf("want the guard's report with the stuck init, got:\n%s", out)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("took %v", d)
	}
}

// A bubble whose fake clock can never move (a loop that never waits, a
// mutex locked twice) is reported by Bubble's guard after the stall
// budget, naming the test and the learner's function, instead of hanging
// until the binary's timeout.
func TestBubbleReportsAStall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	for _, c := range []struct {
		run  string
		want []string
	}{
		{"Step2", []string{
			"panic: labtest: TestStep2_Spins is stuck: Run never waited between renewals: a goroutine of your code has been running (*Lease).Run (spin.go:",
			"for 1s without ever waiting",
			"Where your code is:",
			"  goroutine ", "[runnable]:",
		}},
		{"Step3", []string{
			"panic: labtest: TestStep3_Relocks is stuck: a goroutine of your code has been waiting 1s in (*Lease).MayAct (spin.go:",
			"for a mutex that is never unlocked",
			"(*Lease).Renew",
		}},
	} {
		start := time.Now()
		cmd := exec.Command("go", "test", "-count=1", "-run", "Step1|"+c.run, "./testdata/spin")
		cmd.Env = append(os.Environ(), stallBudgetEnv+"=1s")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("%s: a stuck bubble passed:\n%s", c.run, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: output lacks %q:\n%s", c.run, w, out)
			}
		}
		if strings.Contains(string(out), "TestStep1_Quick is stuck") {
			t.Errorf("the healthy bubble was reported:\n%s", out)
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("%s took %v", c.run, d)
		}
	}
}

// With -timeout 0 (a debugger session, where breakpoints stop every
// goroutine while real time runs on) Bubble sets no guard.
func TestBubbleNoGuardWithoutATimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	bin := filepath.Join(t.TempDir(), "spin.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "./testdata/spin").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-test.timeout=0", "-test.run=Step2")
	cmd.Env = append(os.Environ(), stallBudgetEnv+"=500ms")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the spinning test ended (%v) although -timeout 0 turns the guard off:\n%s", err, out.String())
	case <-time.After(3 * time.Second):
	}
	cmd.Process.Kill()
	<-done
	if strings.Contains(out.String(), "is stuck") {
		t.Errorf("the guard fired under -timeout 0:\n%s", out.String())
	}
}
