//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/testwait"
)

// TestSignalsStopCommands sends Ctrl-C (SIGINT) and SIGTERM to commands
// that wait: a plain quiz waiting for an answer, and check on a course
// whose lesson file is a named pipe (which must be refused, not opened).
// Each must end within a second of the signal, with 130 or 143.
func TestSignalsStopCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	bin := filepath.Join(t.TempDir(), "playground")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("quiz/"+sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--content", "../../content/testdata/course-ok", "quiz", "second-go", "--plain")
			cmd.Env = append(os.Environ(), "PLAYGROUND_STATE_DIR="+t.TempDir())
			stdin, err := cmd.StdinPipe() // open, never written: the quiz waits
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			out := &lockedBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, out, "answer (")
			stopAndCheck(t, cmd, sig, out)
		})
	}

	// check on a course whose first lesson is a named pipe.
	course := t.TempDir()
	if err := os.CopyFS(course, os.DirFS("../../content/testdata/course-ok")); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(course, "lessons", "01-first-steps", "lesson.md")
	os.Remove(md)
	if err := syscall.Mkfifo(md, 0o644); err != nil {
		t.Skipf("no named pipes: %v", err)
	}
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		defer close(done)
		c := exec.Command(bin, "check", course)
		c.Env = append(os.Environ(), "PLAYGROUND_STATE_DIR="+t.TempDir())
		out, err = c.CombinedOutput()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("check on a named pipe hangs")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "not a regular file (a named pipe)") {
		t.Fatalf("check with a named pipe: %v\n%s", err, out)
	}
}

func waitFor(t *testing.T, out *lockedBuffer, s string) {
	t.Helper()
	testwait.Until(t, 20*time.Second, fmt.Sprintf("%q on the output", s),
		func() bool { return strings.Contains(out.String(), s) }, out.String)
}

func stopAndCheck(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, out *lockedBuffer) {
	t.Helper()
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		took := time.Since(sent)
		want := 128 + int(sig)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != want {
			t.Errorf("exit %v, want %d", err, want)
		}
		if took > 2*time.Second {
			t.Errorf("took %v to stop", took)
		}
		if !strings.Contains(out.String(), "interrupted") {
			t.Errorf("no 'interrupted' in the output:\n%s", out.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 10 s after %v", sig)
	}
}

// lockedBuffer is an output buffer the test may read while the process
// writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
