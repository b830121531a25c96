package grade

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, pkg string) Options {
	t.Helper()
	dir, err := filepath.Abs("testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	return Options{Dir: dir, Pkg: "./labs/" + pkg, Env: []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, BinDir: t.TempDir()}
}

// The kept test binary must be reused when nothing changed and rebuilt
// whenever the code did: a stale binary would grade old code.
func TestRunKeepsBinaryButNeverStale(t *testing.T) {
	o := fixture(t, "mixed")
	bin := o.binPath()
	if bin == "" || filepath.Dir(bin) != o.BinDir {
		t.Fatalf("binPath = %q, want a file in %s", bin, o.BinDir)
	}
	// The go command touches an up-to-date binary, so compare contents.
	grade := func(overlay map[string]string) (*Result, [32]byte) {
		t.Helper()
		o.Overlay = overlay
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatalf("no kept test binary after a run: %v", err)
		}
		return res, sha256.Sum256(data)
	}
	solution := map[string]string{"labs/mixed/mixed.go": "solutions/mixed/mixed.go"}
	stub1, t1 := grade(nil)
	stub2, t2 := grade(nil)
	if t2 != t1 {
		t.Errorf("binary relinked although nothing changed")
	}
	sol, t3 := grade(solution)
	stub3, t4 := grade(nil)
	if t3 == t2 || t4 == t3 {
		t.Errorf("binary not relinked when the code changed")
	}
	double := func(r *Result) Status { return r.Test("TestStep2_Doubles").Status }
	if double(stub1) != Fail || double(stub2) != Fail || double(sol) != Pass || double(stub3) != Fail {
		t.Fatalf("TestStep2 was %s, %s, %s (solution), %s; want fail, fail, pass, fail",
			double(stub1), double(stub2), double(sol), double(stub3))
	}
}

func TestRunMixed(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "mixed"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.BuildFailed || res.TimedOut {
		t.Fatalf("Passed=%v BuildFailed=%v TimedOut=%v, want a plain failing run", res.Passed, res.BuildFailed, res.TimedOut)
	}
	steps := res.Steps([]string{"TestStep1_Passes", "TestStep2_Doubles", "TestStep3_Skipped", "TestStep4_Subtests", "TestStep5_Missing"})
	want := []Status{Pass, Fail, Skip, Fail, NotRun}
	for i, s := range steps {
		if s.Status != want[i] {
			t.Errorf("%s: %s, want %s", s.Test, s.Status, want[i])
		}
	}
	if f := strings.Join(steps[1].Failure, "\n"); !strings.Contains(f, "mixed_test.go:") || !strings.Contains(f, "Double(2) = 0") || strings.Contains(f, "--- FAIL") {
		t.Errorf("step 2 failure lines = %q, want the t.Fatalf line with its position and no framing", f)
	}
	if f := strings.Join(steps[3].Failure, "\n"); !strings.Contains(f, "subtest saw") || !strings.Contains(f, "TestStep4_Subtests/broken") {
		t.Errorf("step 4 failure lines = %q, want the failing subtest's name and message", f)
	}
	if got := StepsPassed(steps); got != 1 {
		t.Errorf("StepsPassed = %d, want 1", got)
	}
}

func TestRunSolutionOverlayWithCount(t *testing.T) {
	o := fixture(t, "mixed")
	o.Overlay = map[string]string{"labs/mixed/mixed.go": "solutions/mixed/mixed.go"}
	o.Count = 3
	o.Run = "TestStep2"
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	tt := res.Test("TestStep2_Doubles")
	if tt == nil || tt.Status != Pass || tt.Runs != 3 || tt.Fails != 0 {
		t.Fatalf("TestStep2 with the overlay = %+v, want 3 passing runs", tt)
	}
	if res.Test("TestStep1_Passes") != nil {
		t.Error("-run did not filter TestStep1")
	}
	if !res.Passed {
		t.Errorf("Passed = false; message %q", res.Message)
	}
}

func TestRunCompileError(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "broken"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.BuildFailed || res.Passed {
		t.Fatalf("BuildFailed=%v Passed=%v, want a build failure", res.BuildFailed, res.Passed)
	}
	if len(res.BuildErrors) == 0 {
		t.Fatalf("no compile errors parsed from %q", res.BuildOutput)
	}
	e := res.BuildErrors[0]
	if !strings.HasSuffix(e.File, "broken.go") || e.Line != 5 || !strings.Contains(e.Msg, "undefined: undefinedName") {
		t.Errorf("first compile error = %+v, want broken.go:5 undefined: undefinedName", e)
	}
	if !strings.Contains(res.Message, "broken.go:5:") {
		t.Errorf("Message = %q, want the file:line of the error", res.Message)
	}
	if s := res.Steps([]string{"TestStep1_Anything"}); s[0].Status != NotRun {
		t.Errorf("step of a lab that does not compile = %s, want not run", s[0].Status)
	}
}

func TestRunTimeout(t *testing.T) {
	o := fixture(t, "hang")
	o.Timeout = 2 * time.Second
	start := time.Now()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// The alarm, not the backstop, must stop it (the message below says
	// which); how long the fixture's build takes is the machine's.
	if d := time.Since(start); d >= o.backstop() {
		t.Errorf("a 2 s timeout took %v, as long as the backstop (%v)", d, o.backstop())
	}
	if !res.TimedOut || res.Passed {
		t.Fatalf("TimedOut=%v Passed=%v, want a timeout", res.TimedOut, res.Passed)
	}
	if !strings.Contains(res.Message, "timed out after 2s") || !strings.Contains(res.Message, "TestStep2_Forever") {
		t.Errorf("Message = %q, want it to say timed out and name the test", res.Message)
	}
	steps := res.Steps([]string{"TestStep1_Quick", "TestStep2_Forever"})
	if steps[0].Status != Pass || steps[1].Status != Fail {
		t.Errorf("steps = %v, %v; want pass, fail", steps[0].Status, steps[1].Status)
	}
}

func TestRunBackstopKills(t *testing.T) {
	// A "go" that hangs without printing, with a child process holding its
	// output open: only killing the whole process group ends it quickly.
	fake := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nsleep 300 &\nsleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := fixture(t, "hang")
	o.GoCmd = fake
	o.Timeout = time.Second
	o.BuildGrace = time.Second
	start := time.Now()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the backstop at %v returned after %v", o.backstop(), d)
	}
	if !res.TimedOut || res.Passed || !strings.Contains(res.Message, "timed out") {
		t.Fatalf("TimedOut=%v Passed=%v Message=%q, want a timeout", res.TimedOut, res.Passed, res.Message)
	}
}

func TestRunCancelled(t *testing.T) {
	o := fixture(t, "hang")
	o.Timeout = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, o)
	if err == nil {
		t.Fatal("a cancelled run returned no error")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancellation took %v to stop the run", d)
	}
}

func TestRunCrash(t *testing.T) {
	res, err := Run(context.Background(), fixture(t, "crash"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.TimedOut {
		t.Fatalf("Passed=%v TimedOut=%v", res.Passed, res.TimedOut)
	}
	s := res.Steps([]string{"TestStep1_Crashes", "TestStep2_NeverReached"})
	if s[0].Status != Fail || s[1].Status != NotRun {
		t.Errorf("steps = %s, %s; want fail, not run", s[0].Status, s[1].Status)
	}
	if !strings.Contains(strings.Join(s[0].Failure, "\n")+res.Message, "boom in a goroutine") {
		t.Errorf("the panic message is not shown: failure %q, message %q", s[0].Failure, res.Message)
	}
}

func TestWarm(t *testing.T) {
	if err := Warm(context.Background(), fixture(t, "mixed")); err != nil {
		t.Fatalf("Warm of a compiling lab: %v", err)
	}
	if err := Warm(context.Background(), fixture(t, "broken")); err == nil || !strings.Contains(err.Error(), "undefinedName") {
		t.Fatalf("Warm of a broken lab = %v, want the compile error", err)
	}
}

func TestParseCountAggregates(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Test":"TestStep1_X"}`,
		`{"Action":"output","Test":"TestStep1_X","Output":"=== RUN   TestStep1_X\n"}`,
		`{"Action":"output","Test":"TestStep1_X","Output":"--- PASS: TestStep1_X (0.01s)\n"}`,
		`{"Action":"pass","Test":"TestStep1_X","Elapsed":0.01}`,
		`{"Action":"run","Test":"TestStep1_X"}`,
		`{"Action":"output","Test":"TestStep1_X","Output":"    x_test.go:9: flaky\n"}`,
		`{"Action":"output","Test":"TestStep1_X","Output":"--- FAIL: TestStep1_X (0.02s)\n"}`,
		`{"Action":"fail","Test":"TestStep1_X","Elapsed":0.02}`,
		`{"Action":"run","Test":"TestStep1_X"}`,
		`{"Action":"output","Test":"TestStep1_X","Output":"--- PASS: TestStep1_X (0.01s)\n"}`,
		`{"Action":"pass","Test":"TestStep1_X","Elapsed":0.01}`,
		`{"Action":"output","Output":"FAIL\n"}`,
		`{"Action":"fail","Elapsed":0.1}`,
	}, "\n")
	res := Parse(strings.NewReader(in))
	res.finish(runEnd{timeout: time.Second})
	tt := res.Test("TestStep1_X")
	if tt.Status != Fail || tt.Runs != 3 || tt.Fails != 1 || !slices.Equal(tt.Failure, []string{"    x_test.go:9: flaky"}) {
		t.Fatalf("aggregated test = %+v", tt)
	}
	if res.Passed {
		t.Fatal("a run with a failing repeat passed")
	}
	if !slices.Equal(tt.Repeats, []Status{Pass, Fail, Pass}) {
		t.Errorf("repeats = %v, want pass, fail, pass", tt.Repeats)
	}
}

// Subtests are recorded by the name go test -run gives them, with a
// failure in any repeat kept.
func TestParseSubtests(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Test":"TestStep2_Swap"}`,
		`{"Action":"run","Test":"TestStep2_Swap/stale_version"}`,
		`{"Action":"output","Test":"TestStep2_Swap/stale_version","Output":"    --- FAIL: TestStep2_Swap/stale_version (0.00s)\n"}`,
		`{"Action":"fail","Test":"TestStep2_Swap/stale_version"}`,
		`{"Action":"run","Test":"TestStep2_Swap/fresh"}`,
		`{"Action":"pass","Test":"TestStep2_Swap/fresh"}`,
		`{"Action":"output","Test":"TestStep2_Swap","Output":"--- FAIL: TestStep2_Swap (0.01s)\n"}`,
		`{"Action":"fail","Test":"TestStep2_Swap"}`,
		`{"Action":"run","Test":"TestStep2_Swap"}`,
		`{"Action":"run","Test":"TestStep2_Swap/stale_version"}`,
		`{"Action":"pass","Test":"TestStep2_Swap/stale_version"}`,
		`{"Action":"output","Test":"TestStep2_Swap","Output":"--- PASS: TestStep2_Swap (0.01s)\n"}`,
		`{"Action":"pass","Test":"TestStep2_Swap"}`,
	}, "\n")
	tt := Parse(strings.NewReader(in)).Test("TestStep2_Swap")
	want := []Subtest{{Name: "TestStep2_Swap/stale_version", Status: Fail}, {Name: "TestStep2_Swap/fresh", Status: Pass}}
	if !slices.Equal(tt.Subtests, want) {
		t.Fatalf("subtests = %+v, want %+v", tt.Subtests, want)
	}
	if tt.Subtest("TestStep2_Swap/fresh") == nil || tt.Subtest("TestStep2_Swap/other") != nil {
		t.Error("Subtest finds a missing subtest or misses a present one")
	}
}

func TestWatchDebounces(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig, err := Watch(ctx, dir, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 { // one burst of saves
		if err := os.WriteFile(filepath.Join(dir, "lock.go"), []byte(strings.Repeat("x", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644)
	select {
	case <-sig:
	case <-time.After(10 * time.Second):
		t.Fatal("no signal after saving a .go file")
	}
	select {
	case <-sig:
		t.Fatal("one burst of saves gave two signals")
	case <-time.After(time.Second):
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("still ignored"), 0o644)
	select {
	case <-sig:
		t.Fatal("a non-Go file triggered a signal")
	case <-time.After(time.Second):
	}
	cancel()
	select {
	case _, ok := <-sig:
		if ok {
			t.Fatal("signal after cancel")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("channel not closed after cancel")
	}
}

func TestPruneBinariesRemovesOnlyOldTestBinaries(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-20 * 24 * time.Hour)
	for name, mtime := range map[string]time.Time{"a-1.test": old, "b-2.test": time.Now(), "notes.txt": old} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	pruneBinaries(dir, 14*24*time.Hour)
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"b-2.test", "notes.txt"}) {
		t.Fatalf("left %v, want [b-2.test notes.txt]", left)
	}
}

func TestDefaultBinDirFollowsCacheDirEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheDirEnv, dir)
	if got, want := DefaultBinDir(), filepath.Join(dir, "labtests"); got != want {
		t.Fatalf("DefaultBinDir() = %q, want %q", got, want)
	}
	o := Options{Dir: "testdata/fixture", Pkg: "./labs/mixed"}
	if got := o.binPath(); filepath.Dir(got) != filepath.Join(dir, "labtests") {
		t.Fatalf("binPath() = %q, want a file in %s/labtests", got, dir)
	}
}

// RaceBuildKept tells a first verification (no race binary kept yet) from
// a later one.
func TestRaceBuildKept(t *testing.T) {
	o := fixture(t, "mixed")
	o.Overlay = map[string]string{"labs/mixed/mixed.go": "solutions/mixed/mixed.go"}
	o.Run = "TestStep1"
	if RaceBuildKept(o) {
		t.Fatal("RaceBuildKept before any run = true")
	}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if RaceBuildKept(o) {
		t.Fatal("RaceBuildKept after a run without -race = true: only a race build counts")
	}
	o.Race = true
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	o.Race = false
	if !RaceBuildKept(o) {
		t.Fatal("RaceBuildKept after a -race run = false")
	}
}

// A lab whose init printed lines that look like a step starting, and then
// never returned, was stopped by the harness's init guard: the message is
// the guard's, not that the binary exited during step 1.
func TestInitGuardOutranksFakeSteps(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start"}`,
		`{"Action":"run","Test":"TestStep1_X"}`,
		`{"Action":"output","Test":"TestStep1_X","Output":"=== RUN   TestStep1_X\n"}`,
		`{"Action":"output","Test":"TestStep1_X","Output":"--- PASS: TestStep1_X (0.00s)\n"}`,
		`{"Action":"pass","Test":"TestStep1_X"}`,
		`{"Action":"output","Output":"labtest: the lab's package did not finish initializing within 20s: an init function or a package-level variable never returns, so no step could start.\n"}`,
		`{"Action":"output","Output":"exit status 2\n"}`,
		`{"Action":"fail","Elapsed":20.1}`,
	}, "\n")
	res := Parse(strings.NewReader(in))
	res.finish(runEnd{timeout: time.Second})
	if res.Passed || !strings.HasPrefix(res.Message, "the lab's package did not finish initializing within 20s") {
		t.Fatalf("passed %v, message %q", res.Passed, res.Message)
	}
}

// What a learner's test prints, and the names it runs under, reach the
// report without an escape sequence: a window title (OSC 0) or a
// clipboard write (OSC 52) never gets to the terminal that shows it.
func TestParseDropsEscapeSequences(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Test":"TestStep1_X\u001b]0;owned\u0007"}`,
		`{"Action":"output","Test":"TestStep1_X\u001b]0;owned\u0007","Output":"    x_test.go:9: got \u001b]52;c;cm0gLXJmIH4=\u0007 want 1\n"}`,
		`{"Action":"output","Test":"TestStep1_X\u001b]0;owned\u0007","Output":"--- FAIL: TestStep1_X\u001b]0;owned\u0007 (0.02s)\n"}`,
		`{"Action":"fail","Test":"TestStep1_X\u001b]0;owned\u0007","Elapsed":0.02}`,
		"plain line \x1b[2J\x1b[H",
		`{"Action":"output","Output":"FAIL\n"}`,
		`{"Action":"fail","Elapsed":0.1}`,
	}, "\n")
	res := Parse(strings.NewReader(in))
	tt := res.Test("TestStep1_X")
	if tt == nil {
		t.Fatalf("tests = %v, want TestStep1_X (its name cleaned)", res.Tests)
	}
	if want := []string{"    x_test.go:9: got  want 1"}; !slices.Equal(tt.Failure, want) {
		t.Errorf("failure = %q, want %q", tt.Failure, want)
	}
	for _, l := range append(res.Output, tt.Failure...) {
		if strings.ContainsRune(l, 0x1b) {
			t.Errorf("an escape reached the result: %q", l)
		}
	}
}

// TestRunTimeoutShowsWhereTheCodeWaits: lab code that waits for
// something that never comes times out, and the step's failure points at
// the learner's function, not at a dump of every goroutine of the test
// binary. (The wait sleeps between looks: a spinning loop on a busy
// machine would reach the wall-clock bound first, by design.)
func TestRunTimeoutShowsWhereTheCodeWaits(t *testing.T) {
	if !schedClock() {
		t.Skip("no run clock here: the testing package's own alarm reports the timeout")
	}
	o := fixture(t, "poll")
	o.Timeout = 2 * time.Second
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Passed || !strings.Contains(res.Message, "TestStep2_Waits") {
		t.Fatalf("TimedOut=%v Passed=%v Message=%q, want a timeout naming step 2", res.TimedOut, res.Passed, res.Message)
	}
	f := strings.Join(res.Steps([]string{"TestStep2_Waits"})[0].Failure, "\n")
	if !strings.Contains(f, "Where your code was when the time ran out:") || !strings.Contains(f, "poll.Await") || !strings.Contains(f, "/poll.go:") {
		t.Errorf("failure does not point at the learner's wait (poll.Await in poll.go):\n%s", f)
	}
	if strings.Contains(f, "SIGQUIT") || strings.Count(f, "goroutine ") != 1 {
		t.Errorf("failure shows the raw dump:\n%s", f)
	}
}
