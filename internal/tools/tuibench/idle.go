//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// idleWindow is how long a process sits untouched while its CPU is counted.
const idleWindow = 10 * time.Second

// idleCPU starts bin with args on a terminal, lets it settle (the TUI's
// embedded etcd starts in the background), then returns the share of one
// core it used over idleWindow with nobody touching it, and the bytes it
// wrote to the terminal meanwhile (redraws).
func idleCPU(bin string, args []string, settle time.Duration) (share float64, wrote int64, err error) {
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
	fmt.Printf("idle for %v, `playground etcd` alone: %.2f%% of a core\n", idleWindow, 100*etcd)
	return nil
}

// countingWriter counts what the program draws.
type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}
