// Package e2e drives the built playground binary in a real terminal
// (tmux) and reads the screen back, the way a learner would use it.
package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/testwait"
)

// session is one tmux server (on a socket of its own) running the binary.
type session struct {
	t      *testing.T
	socket string
}

func (s *session) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *session) screen() string { return s.tmux("capture-pane", "-p", "-t", "pg") }

func (s *session) keys(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		s.tmux("send-keys", "-t", "pg", k)
		// One key at a time, like a person; a lone escape needs a pause
		// after it or the terminal reads the next key as alt+key.
		pause := 30 * time.Millisecond
		if k == "Escape" {
			pause = 200 * time.Millisecond
		}
		time.Sleep(pause)
	}
}

// screenWait is how long a test waits for a screen to show what it
// expects. A screen is drawn within milliseconds, but a -race build on a
// loaded 2-core machine has been seen to take over 5 s; the wait ends as
// soon as the screen shows it, so a generous bound costs a passing test
// nothing and a broken one only time.
const screenWait = 30 * time.Second

// waitFor polls the screen until it shows every string or the time is up.
func (s *session) waitFor(d time.Duration, want ...string) string {
	s.t.Helper()
	var scr, missing string
	testwait.Until(s.t, d, "the screen to show "+strings.Join(want, ", "), func() bool {
		scr, missing = s.screen(), ""
		for _, w := range want {
			if !strings.Contains(scr, w) {
				missing = w
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("missing %q:\n%s", missing, scr) })
	return scr
}

// fits checks the screen is exactly the terminal: 24 lines, none wider
// than 80 columns, the key help on the last line (nothing scrolled off).
func (s *session) fits(scr string) {
	s.t.Helper()
	lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	if len(lines) > 24 {
		s.t.Fatalf("screen has %d lines:\n%s", len(lines), scr)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > 80 {
			s.t.Fatalf("line %d has %d columns: %q", i+1, n, l)
		}
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

// binary builds the playground once for all the tests of the package.
func binary(t *testing.T, root string) string {
	t.Helper()
	buildOnce.Do(func() {
		touchSources(root)
		binDir, buildErr = os.MkdirTemp("", "pg-e2e-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "playground")
		build := exec.Command("go", "build", "-o", binPath, "./cmd/playground")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// touchSources stats every source and course file of the module. The go
// command caches test results by the files a test opens; the binary is
// built by a child process it cannot see, so without this a changed
// program would not re-run a cached pass.
func touchSources(root string) {
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".mod", ".sum":
			os.Stat(path)
		}
		return nil
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// start builds the binary and runs it in a fresh 80x24 tmux session with
// an empty state directory, after prepare (if any) has put files in it.
func start(t *testing.T, prepare func(stateDir string)) (*session, string) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end test needs it (CI installs it)")
	}
	root := moduleRoot(t)
	bin := binary(t, root)
	state := t.TempDir()
	if prepare != nil {
		prepare(state)
	}
	return startIn(t, root, bin, state, ""), state
}

// startIn runs the binary in a fresh 80x24 tmux session (its socket named
// after the test and run) on the state directory given.
func startIn(t *testing.T, root, bin, state, run string) *session {
	s := &session{t: t, socket: fmt.Sprintf("pg-e2e-%d-%s%s", os.Getpid(), t.Name(), run)}
	cache := t.TempDir() // kept lab test binaries: not the user's cache
	cmd := fmt.Sprintf("cd %q && PLAYGROUND_STATE_DIR=%q PLAYGROUND_CACHE_DIR=%q TERM=xterm-256color %q; echo EXITED $?; sleep 60", root, state, cache, bin)
	s.tmux("new-session", "-d", "-s", "pg", "-x", "80", "-y", "24", cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func TestHomeLessonQuizLab(t *testing.T) {
	s, state := start(t, nil)

	scr := s.waitFor(screenWait, "Ownership election playground", "01 Do you need an election?", "09 ")
	s.fits(scr)
	// etcd starts in the background and reports ready on the status line.
	s.waitFor(30*time.Second, "etcd: ready http://127.0.0.1:")

	s.keys("Enter")
	scr = s.waitFor(screenWait, "01 Do you need an election?", "page 1/")
	s.fits(scr)
	s.keys("n")
	s.waitFor(screenWait, "page 2/")

	s.keys("t")
	scr = s.waitFor(screenWait, "Question 1 of", "question 1/")
	s.fits(scr)
	s.keys("1", "Enter")
	// Answered: the pick is marked and the right option ticked (the next
	// key says "next question" or "see score" by the quiz's length).
	scr = s.waitFor(screenWait, "→ ", "✓ ")
	s.fits(scr)

	// Back to the reader, home, then the lab of lesson 2. Each escape
	// waits for its screen: two sent back to back on a busy machine can
	// reach the program as one alt+escape.
	s.keys("Escape")
	s.waitFor(screenWait, "page 2/")
	s.keys("Escape")
	s.waitFor(screenWait, "c Continue: ")
	s.keys("2", "l")
	scr = s.waitFor(screenWait, "Lab 2.1 · ")
	s.fits(scr)

	s.keys("Escape")
	s.waitFor(screenWait, "c Continue: ")
	s.keys("q")
	s.waitFor(screenWait, "EXITED 0")

	data, err := os.ReadFile(filepath.Join(state, "progress.json"))
	if err != nil {
		t.Fatalf("no progress saved: %v", err)
	}
	if !strings.Contains(string(data), `"do-you-need-an-election"`) {
		t.Fatalf("progress does not mention the lesson read:\n%s", data)
	}
}

func TestCtrlCQuitsFromTheReader(t *testing.T) {
	s, _ := start(t, nil)
	s.waitFor(screenWait, "01 Do you need an election?")
	s.keys("Enter")
	s.waitFor(screenWait, "page 1/")
	s.keys("C-c")
	s.waitFor(screenWait, "EXITED 0")
}

func TestCorruptProgressIsMovedAsideWithNotice(t *testing.T) {
	s, state := start(t, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "progress.json"), []byte("{broken"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	s.fits(s.waitFor(screenWait, "saved progress could not be read", "01 Do you need an election?"))
	matches, _ := filepath.Glob(filepath.Join(state, "progress.json.corrupt-*"))
	if len(matches) != 1 {
		t.Fatalf("corrupt file not moved aside: %v", matches)
	}
	s.keys("q")
	s.waitFor(screenWait, "EXITED 0")
}

// TestUnsavableProgressEndsNonZero: the progress file cannot be written
// (its lock is a link into /proc, where nobody can create a file). The
// learner reads a page and quits: the program says on the terminal that
// progress changes were not saved and exits non-zero, like quiz and
// review, so a script that started it does not take the session as kept.
func TestUnsavableProgressEndsNonZero(t *testing.T) {
	s, _ := start(t, func(dir string) {
		if err := os.Symlink("/proc/no-such-process/lock", filepath.Join(dir, "progress.json.lock")); err != nil {
			t.Fatal(err)
		}
	})
	s.waitFor(screenWait, "01 Do you need an election?")
	s.keys("Enter")
	s.waitFor(screenWait, "page 1 of", "could not save progress")
	s.keys("n")
	s.waitFor(screenWait, "page 2 of")
	s.keys("Escape")
	s.waitFor(screenWait, "01 Do you need an election?")
	s.keys("q")
	s.waitFor(screenWait, "progress changes could not be saved", "EXITED 1")
}

// TestProgressSurvivesARestart reads three pages of lesson 3, quits, and
// starts again on the same state: the course map shows the pages read from
// the first frame, c opens page 3 of lesson 3, and the progress view
// counts them.
func TestProgressSurvivesARestart(t *testing.T) {
	s, state := start(t, nil)
	s.waitFor(screenWait, "03 Locks and the TTL unlock bug")
	s.keys("3", "Enter")
	s.waitFor(screenWait, "page 1/")
	s.keys("n")
	s.waitFor(screenWait, "page 2/")
	s.keys("n")
	s.waitFor(screenWait, "page 3/")
	s.keys("Escape")
	s.waitFor(screenWait, "Continue: 03 Locks and the TTL unlock bug, page 4/")
	s.keys("q")
	s.waitFor(screenWait, "EXITED 0")

	s2 := startIn(t, moduleRoot(t), binary(t, moduleRoot(t)), state, "-again")
	scr := s2.waitFor(screenWait, "Continue: 03 Locks and the TTL unlock bug, page 4/")
	s2.fits(scr)
	if strings.Contains(scr, "New here?") {
		t.Fatalf("the restarted course map greets a new learner:\n%s", scr)
	}
	var row string
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "03 Locks and the TTL unlock bug") {
			row = l
		}
	}
	if !strings.Contains(row, " 3/") {
		t.Fatalf("lesson 3's row does not count 3 pages read: %q\n%s", row, scr)
	}
	// c opens the next page not read yet.
	s2.keys("c")
	// "page 4 of" is the reader's own heading: the course map's Continue
	// line says "page 4/" too, and a key sent before the reader is open
	// goes to the course map.
	s2.fits(s2.waitFor(screenWait, "03 Locks and the TTL unlock bug", "page 4 of"))
	// The progress view, one key from the reader, counts the pages too.
	s2.keys("P")
	scr = s2.waitFor(screenWait, "Your progress", "Total: pages 4/", "03 Locks and the TTL unlock bug")
	s2.fits(scr)
	s2.keys("Escape")
	s2.waitFor(screenWait, "page 4 of")
	s2.keys("Escape")
	s2.waitFor(screenWait, "Continue: 03 Locks and the TTL unlock bug, page 5/")
	s2.keys("q")
	s2.waitFor(screenWait, "EXITED 0")
}

// TestWatchGoesOnAtHome turns watch mode on for lab 01_cas and goes back
// to the course map: the status line there says what watch mode graded.
// The lab is the checkout's own, so its result depends on what the learner
// wrote; any finished grade will do.
func TestWatchGoesOnAtHome(t *testing.T) {
	s, _ := start(t, nil)
	s.waitFor(screenWait, "01 Do you need an election?")
	s.keys("2", "l")
	s.waitFor(screenWait, "Lab 2.1 · ")
	s.keys("w")
	s.waitFor(screenWait, "● watching", "watch 01_cas: ")
	graded := regexp.MustCompile(`watch 01_cas: (step \d/\d failing|✓ passed|passed once|does not compile|could not grade|timed out)`)
	var last string
	testwait.Until(t, 3*time.Minute, "watch mode to finish a grade (the lab's first build)",
		func() bool { last = s.screen(); return graded.MatchString(last) }, func() string { return last })
	s.keys("Escape")
	scr := s.waitFor(screenWait, "Ownership election playground", "watch 01_cas: ")
	s.fits(scr)
	if !graded.MatchString(scr) && !strings.Contains(scr, "watch 01_cas: grading…") {
		t.Fatalf("the course map does not say what watch mode did:\n%s", scr)
	}
	s.keys("C-c")
	s.waitFor(screenWait, "EXITED 0")
}
