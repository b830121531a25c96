//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal pair of the given size.
func openPTY(cols, rows int) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open pty slave: %w", err)
	}
	ws := &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, ws); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("size pty: %w", err)
	}
	return master, slave, nil
}

// firstFrame starts bin on a fresh terminal and returns the time from
// exec until the home screen's last line (the key help) has been written.
// It then quits the program with q and waits for it to exit.
func firstFrame(bin string, cols, rows int) (time.Duration, error) {
	master, slave, err := openPTY(cols, rows)
	if err != nil {
		return 0, err
	}
	defer master.Close()
	state, err := os.MkdirTemp("", "tuibench-state-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(state)

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PLAYGROUND_STATE_DIR="+state, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}

	seen := make(chan time.Time, 1)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 64<<10)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				out.Write(buf[:n])
				plain := ansi.Strip(out.String())
				if strings.Contains(plain, "Ownership election playground") && strings.Contains(plain, "q quit") {
					seen <- time.Now()
					// Keep draining so the program never blocks on output.
					for {
						if _, err := master.Read(buf); err != nil {
							return
						}
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()

	start := time.Now()
	if err := cmd.Start(); err != nil {
		slave.Close()
		return 0, fmt.Errorf("start %s: %w", bin, err)
	}
	slave.Close()
	var at time.Time
	select {
	case at = <-seen:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return 0, fmt.Errorf("no home frame within 10s")
	}
	// Let etcd finish starting before quitting, so every run cleans up the
	// same way and the next run starts from the same state.
	time.Sleep(300 * time.Millisecond)
	master.Write([]byte("q"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return 0, fmt.Errorf("program exit: %w", err)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		return 0, fmt.Errorf("program did not quit on q")
	}
	return at.Sub(start), nil
}
