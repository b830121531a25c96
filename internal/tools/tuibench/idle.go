//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// idleWindow is how long a process sits untouched while its CPU is counted.
const idleWindow = 10 * time.Second

// idleCPU starts bin with args on a terminal, lets it settle (the TUI's
// embedded etcd starts in the background), then returns the share of one
// core it used over idleWindow with nobody touching it, and the bytes it
// wrote to the terminal meanwhile (redraws).
func idleCPU(bin string, args []string, settle time.Duration) (share float64, wrote int64, err error) {
	return idleCPUAfter(bin, args, settle, nil)
}

// idleCPUAfter is idleCPU with a prepare step after the settle time: it
// may type on the terminal (term) and read what was drawn (out) to bring
// the program into the state to measure.
func idleCPUAfter(bin string, args []string, settle time.Duration, prepare func(term io.Writer, out *countingWriter) error) (share float64, wrote int64, err error) {
	master, slave, err := openPTY(80, 24)
	if err != nil {
		return 0, 0, err
	}
	defer master.Close()
	state, err := os.MkdirTemp("", "tuibench-idle-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(state)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PLAYGROUND_STATE_DIR="+state, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	slave.Close()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	var counted countingWriter
	go io.Copy(&counted, master)
	time.Sleep(settle)
	if prepare != nil {
		if err := prepare(master, &counted); err != nil {
			return 0, 0, err
		}
	}
	before, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	w0 := counted.n.Load()
	time.Sleep(idleWindow)
	after, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	return float64(after-before) / float64(idleWindow), counted.n.Load() - w0, nil
}

// cpuTime is the user plus system time the process has used, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; count after its ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat: %q", b)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// idleFigures prints the idle CPU of the TUI (with its embedded etcd) and
// of `playground etcd` alone.
func idleFigures(bin string) error {
	tui, tuiBytes, err := idleCPU(bin, nil, 3*time.Second)
	if err != nil {
		return fmt.Errorf("idle TUI: %w", err)
	}
	etcd, _, err := idleCPU(bin, []string{"etcd"}, 2*time.Second)
	if err != nil {
		return fmt.Errorf("idle etcd: %w", err)
	}
	fmt.Printf("idle for %v on the course map (80x24), TUI with its embedded etcd: %.2f%% of a core, %d bytes drawn\n",
		idleWindow, 100*tui, tuiBytes)
	if watch, watchBytes, err := idleCPUAfter(bin, nil, 3*time.Second, watchFirstLab); err != nil {
		fmt.Printf("idle with watch mode on: not measured: %v\n", err)
	} else {
		fmt.Printf("idle for %v on the course map with watch mode on (lab 01_cas watched, no save): %.2f%% of a core, %d bytes drawn\n",
			idleWindow, 100*watch, watchBytes)
	}
	if exp, expBytes, err := idleCPUAfter(bin, nil, 3*time.Second, runFirstExperiment); err != nil {
		fmt.Printf("idle on the experiment screen after a run: not measured: %v\n", err)
	} else {
		fmt.Printf("idle for %v on the experiment screen after a finished run of cas-race (its store view kept): %.2f%% of a core, %d bytes drawn\n",
			idleWindow, 100*exp, expBytes)
	}
	fmt.Printf("idle for %v, `playground etcd` alone: %.2f%% of a core\n", idleWindow, 100*etcd)
	return nil
}

// watchFirstLab opens the first lab from the course map (lesson 2's),
// turns watch mode on, waits for its first grade to end (the spinner
// stops drawing), and goes back to the course map. It needs the labs: run
// the bench from the checkout.
func watchFirstLab(term io.Writer, out *countingWriter) error {
	for _, k := range []string{"j", "l", "w"} {
		if _, err := io.WriteString(term, k); err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !out.quiet(2*time.Second, 3*time.Minute) {
		return errors.New("the first watch grade did not end within 3 minutes")
	}
	if !strings.Contains(out.text(), "watch") {
		return errors.New("watch mode did not start (is the bench running in a checkout with labs/?)")
	}
	// esc: back to the course map. A lone escape byte may wait in the
	// terminal reader for a second one, so wait for the map itself.
	out.reset()
	if _, err := io.WriteString(term, "\x1b"); err != nil {
		return err
	}
	if !out.shows("Ownership election playground", 10*time.Second) || !out.quiet(time.Second, 10*time.Second) {
		return errors.New("esc did not bring back the course map")
	}
	return nil
}

func (c *countingWriter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tail = nil
}

// shows waits until s was drawn, up to limit.
func (c *countingWriter) shows(s string, limit time.Duration) bool {
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		if strings.Contains(c.text(), s) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// countingWriter counts what the program draws, and keeps the tail.
type countingWriter struct {
	n    atomic.Int64
	mu   sync.Mutex
	tail []byte
	last time.Time // when the latest bytes came
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - 1<<16; over > 0 {
		c.tail = c.tail[over:]
	}
	c.last = time.Now()
	return len(p), nil
}

// text is the tail of what was drawn, without escape sequences.
func (c *countingWriter) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ansi.Strip(string(c.tail))
}

// quiet waits until nothing has been drawn for d, up to limit.
func (c *countingWriter) quiet(d, limit time.Duration) bool {
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		c.mu.Lock()
		last := c.last
		c.mu.Unlock()
		if time.Since(last) >= d {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// runFirstExperiment opens lesson 2's experiment (cas-race) from the
// course map, switches the first run from step mode to auto-play,
// predicts, and waits for the run to finish and the screen to go quiet:
// a finished run must leave no timer behind (the screen's tick and the
// store observer stop with it).
func runFirstExperiment(term io.Writer, out *countingWriter) error {
	for _, k := range []string{"j", "x"} {
		if _, err := io.WriteString(term, k); err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !out.shows("Experiment: cas-race", 10*time.Second) {
		return errors.New("x on lesson 2 did not open the cas-race experiment")
	}
	// a: auto-play instead of the first run's step mode; then 1 predicts
	// (and starts the run), or enter starts it when there is no question.
	if _, err := io.WriteString(term, "a"); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	start := "\r"
	if strings.Contains(out.text(), "Predict first") {
		start = "1"
	}
	if _, err := io.WriteString(term, start); err != nil {
		return err
	}
	if !out.shows("finished: enter runs it again", time.Minute) {
		return errors.New("the cas-race run did not finish within a minute")
	}
	if !out.quiet(time.Second, 10*time.Second) {
		return errors.New("the experiment screen kept drawing after the run")
	}
	return nil
}
