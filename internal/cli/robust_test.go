package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ownership-election/playground/internal/testwait"
)

// A line far over the limit gets "answer too long" and the question again,
// instead of ending input; escape sequences and other control bytes typed
// (or piped) in are not echoed back to the terminal.
func TestQuizPlainLongLineAndControlBytes(t *testing.T) {
	t.Setenv("PLAYGROUND_LEARNER", "tester")
	in := strings.Repeat("1", 100_000) + "\n" + "\x1b]0;owned\x07\x1b[2J2\n" + "2\n1,2\n19\n2 3 1\n"
	code, out, _ := run(t, in, "--content", okCourse, "quiz", "second-go", "--plain")
	if code != 0 || !strings.HasSuffix(out, "\nscore: 4/4\n") {
		t.Fatalf("exit %d, output ends %q", code, out[max(0, len(out)-300):])
	}
	if !strings.Contains(out, "answer too long (over 4096 bytes)") {
		t.Errorf("no 'answer too long' message")
	}
	if strings.Count(out, "Question 1 of 4") != 1 || strings.Count(out, "answer (") != 6 {
		t.Errorf("want the first question asked again twice, then one answer each: %d prompts", strings.Count(out, "answer ("))
	}
	for _, b := range []string{"\x1b", "\x07"} {
		if strings.Contains(out, b) {
			t.Errorf("control byte %q echoed", b)
		}
	}
}

func TestQuizPlainEOFSaysHowManyAndFails(t *testing.T) {
	t.Setenv("PLAYGROUND_LEARNER", "tester")
	code, out, _ := run(t, "2\n1,2\n", "--content", okCourse, "quiz", "second-go", "--plain")
	if code != 1 || !strings.Contains(out, "input ended after 2 of 4 questions") {
		t.Errorf("exit %d, output ends %q", code, out[max(0, len(out)-200):])
	}
}

// Ctrl-C while the quiz waits for an answer stops it at once with 130.
func TestQuizPlainStopsOnInterruptWhileWaiting(t *testing.T) {
	pr, pw := io.Pipe() // input that never comes
	defer pw.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	var out, errb testwait.Buffer
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"--content", okCourse, "quiz", "second-go", "--plain"}, pr, &out, &errb)
	}()
	// The interrupt must find the quiz waiting at its first prompt.
	testwait.Until(t, 10*time.Second, "the first prompt", func() bool { return strings.Contains(out.String(), "answer (") },
		func() string { return "output: " + out.String() + "\nstderr: " + errb.String() })
	cancel(&Interrupted{Signal: syscall.SIGINT})
	select {
	case code := <-done:
		if code != 130 || !strings.Contains(errb.String(), "interrupted") {
			t.Fatalf("exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("quiz did not stop after the interrupt while waiting for input")
	}
}

func TestInterruptExitCodes(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&Interrupted{Signal: sig})
		if got, ok := interruptedCode(ctx); !ok || got != want {
			t.Errorf("%v: code %d, want %d", sig, got, want)
		}
	}
	if _, ok := interruptedCode(context.Background()); ok {
		t.Error("a live context counts as interrupted")
	}
}

func TestEndpointsValidated(t *testing.T) {
	for _, bad := range []string{"foo", "http://", "ftp://127.0.0.1:2379", "http://127.0.0.1", "http://127.0.0.1:99999", "http://h:2379/path", ","} {
		start := time.Now()
		code, _, errOut := run(t, "", "--etcd-endpoints", bad, "experiment", "list")
		if code != 2 || !strings.Contains(errOut, "--etcd-endpoints") {
			t.Errorf("%q: exit %d, stderr %q", bad, code, errOut)
		}
		if time.Since(start) > time.Second {
			t.Errorf("%q: took %v to refuse", bad, time.Since(start))
		}
	}
	for list, want := range map[string]string{
		"http://127.0.0.1:2379,https://[::1]:2379": "http://127.0.0.1:2379 https://[::1]:2379",
		"localhost:2379": "http://localhost:2379",
	} {
		got, err := parseEndpoints(list)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%q: %v %v, want %s", list, got, err, want)
		}
	}
}

func TestSubcommandHelp(t *testing.T) {
	for _, cmd := range []string{"quiz", "check", "experiment", "etcd"} {
		for _, flag := range []string{"--help", "-h"} {
			code, out, errOut := run(t, "", cmd, flag)
			if code != 0 || !strings.HasPrefix(out, "Usage: playground [global flags] "+cmd) || errOut != "" {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", cmd, flag, code, out, errOut)
			}
		}
	}
	code, out, _ := run(t, "", "experiment", "run", "--help")
	if code != 0 || !strings.Contains(out, "--replicas") {
		t.Errorf("experiment run --help: exit %d: %s", code, out)
	}
	code, out, _ = run(t, "", "quiz", "--help")
	if code != 0 || !strings.Contains(out, "--plain") {
		t.Errorf("quiz --help lacks its flags: %s", out)
	}
}

func TestExperimentFlagRanges(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"cas-race", "--replicas", "1000"}, "--replicas 1000: cas-race runs 5 to 50 replicas"},
		{[]string{"cas-race", "--replicas", "-3"}, "runs 5 to 50 replicas"},
		{[]string{"renewal", "--ttl", "100000"}, "--ttl 100000: renewal takes a lease TTL of 1 to 60 seconds"},
		{[]string{"renewal", "--ttl", "-1"}, "1 to 60 seconds"},
		{[]string{"leader-change", "--ttl", "2"}, "3 to 60 seconds"},
		{[]string{"ttl-unlock-bug", "--replicas", "4"}, "runs exactly 3 replica(s)"},
	}
	for _, tc := range cases {
		code, _, errOut := runCLI(t, append([]string{"experiment", "run"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.msg)
		}
	}
}

// firstWrite signals once something was written: the run has begun.
type firstWrite struct {
	mu      sync.Mutex
	b       bytes.Buffer
	started chan struct{}
}

func (f *firstWrite) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.b.Len() == 0 {
		close(f.started)
	}
	return f.b.Write(p)
}

func (f *firstWrite) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.String()
}

// Ctrl-C in the middle of any experiment ends it with 130 and says it was
// interrupted, never with a verdict drawn from a run cut short.
func TestExperimentInterruptedInEveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts every experiment")
	}
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	for _, name := range knownExperiments() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			out := &firstWrite{started: make(chan struct{})}
			var errb bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- Main(ctx, []string{"experiment", "run", name}, strings.NewReader(""), out, &errb)
			}()
			select {
			case <-out.started:
			case code := <-done:
				t.Fatalf("ended (exit %d) before printing anything: %s", code, errb.String())
			case <-time.After(60 * time.Second):
				t.Fatal("no event within a minute")
			}
			cancel(&Interrupted{Signal: syscall.SIGINT})
			select {
			case code := <-done:
				if code != 130 || !strings.Contains(errb.String(), "interrupted") || !strings.Contains(out.String(), "interrupted after") || strings.Contains(out.String(), "verdict:") {
					t.Errorf("exit %d, stderr %q, output ends %q", code, errb.String(), tail(out.String()))
				}
			case <-time.After(10 * time.Second):
				t.Fatal("still running 10 s after Ctrl-C")
			}
		})
	}
}

func tail(s string) string { return s[max(0, len(s)-300):] }

// TestHelpFitsEightyColumns: --help and every command's --help fit an
// 80-column terminal, so no line folds in the middle of a word.
func TestHelpFitsEightyColumns(t *testing.T) {
	args := [][]string{{"--help"}}
	for name := range commands {
		if name != "" {
			args = append(args, []string{name, "--help"})
		}
	}
	for _, a := range args {
		code, out, _ := run(t, "", a...)
		if code != 0 {
			t.Errorf("%q: exit %d", a, code)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%q: a line of %d columns:\n%s", a, n, line)
			}
		}
	}
}
