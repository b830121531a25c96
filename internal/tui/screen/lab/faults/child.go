package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/proctree"
	"github.com/ownership-election/playground/internal/sanitize"
)

// The run is a child process: `playground experiment run --lab ID
// --schedule NAME --json --control --record FILE`, whose events come as
// JSON lines on its standard output and whose history is the FILE.

// faultCommand is the child's command line; its --record file is the
// last argument.
func (m Model) faultCommand(ctx context.Context, r *faultRun) *exec.Cmd {
	prog := m.opts.Program
	if prog == "" {
		prog, _ = os.Executable()
	}
	record := recordFile()
	args := []string{"experiment", "run", "--lab", m.opts.Lab, "--schedule", r.schedule, "--json", "--control"}
	if r.replay != "" {
		args[4], args[5] = "--faults", r.replay
	}
	if r.reference {
		args = append(args, "--reference")
	}
	args = append(args, "--record", record)
	if r.schedule == exploreEntry {
		// Its progress comes as events; the history it saves is its
		// smallest failing run (or its calm run when every fault held).
		args = []string{"experiment", "explore", "--lab", m.opts.Lab, "--json", "--save", record}
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = m.opts.Root // the child finds the learner's checkout from here
	cmd.Env = append(os.Environ(), m.opts.Env...)
	// The child ends with the playground, even killed with -9: the kernel
	// sends it SIGTERM when its parent dies (Linux).
	proctree.DieWithParent(cmd, syscall.SIGTERM)
	// Stopped (esc, leaving the program): SIGTERM lets the child stop its
	// replicas and etcd; it is killed if it has not after WaitDelay.
	cmd.Cancel = func() error { return terminate(cmd) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// recordFile is a new file for a run's history, its name unlike any
// other run's, also another screen's in this process (the child replaces
// it with the history).
func recordFile() string {
	f, err := os.CreateTemp("", "playground-labrun-*.json")
	if err != nil {
		return filepath.Join(os.TempDir(), fmt.Sprintf("playground-labrun-%d-%d.json", os.Getpid(), time.Now().UnixNano()))
	}
	f.Close()
	return f.Name()
}

// runChild runs the child, sends each event it prints, then its end;
// it removes the child's --record file, and its --faults file, written
// for it (replayFile).
func runChild(ctx context.Context, cmd *exec.Cmd, seq int, ch chan tea.Msg) {
	record := cmd.Args[len(cmd.Args)-1]
	defer os.Remove(record)
	if i := slices.Index(cmd.Args, "--faults"); i > 0 {
		defer os.Remove(cmd.Args[i+1])
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		ch <- faultDoneMsg{seq: seq, err: err}
		return
	}
	stderr := proctree.NewTail(8 << 10) // bounded: a chatty child
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		ch <- faultDoneMsg{seq: seq, err: fmt.Errorf("start the run: %w", err)}
		return
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 4096), 1<<20)
	var explored *exploreView
	for sc.Scan() {
		msg := faultMsg{seq: seq, ch: ch}
		if p, ok := labrun.ParseBuildLine(sc.Bytes()); ok {
			msg.build = &p // the first build's progress
		} else if json.Unmarshal(sc.Bytes(), &msg.e) != nil || msg.e.Kind == "" || msg.e.Kind == "verdict" {
			if msg.e.Kind == "verdict" {
				explored = parseExplore(sc.Bytes()) // explore's grid and divergence
			}
			continue // the final verdict line: the history has it
		} else {
			sanitize.Strings(&msg.e) // the learner's code wrote some of its texts
		}
		select {
		case ch <- msg:
		case <-ctx.Done():
		}
	}
	werr := cmd.Wait()
	// Its stderr carries the build of the learner's code (the compiler
	// quotes their lines) and whatever that code printed.
	done := faultDoneMsg{seq: seq, stderr: sanitize.Text(strings.TrimSpace(stderr.String())), explore: explored}
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		done.code = ee.ExitCode()
	case werr != nil:
		done.err = werr
	}
	h, rerr := readRecord(record)
	switch {
	case rerr == nil:
		done.history = &h
	case done.err == nil && (done.code == 0 || done.stderr == ""):
		// The child ended well, or said nothing of a failure, so a
		// history was due (what it printed while building is no reason).
		done.err = rerr
	}
	select {
	case ch <- done:
	case <-ctx.Done(): // the screen stopped the run and reads no more
	}
}

// readRecord reads the history a child recorded.
func readRecord(path string) (history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return history.History{}, fmt.Errorf("read the run's history: %w", err)
	}
	defer f.Close()
	h, err := labrun.ReadHistory(f)
	if err != nil {
		return h, fmt.Errorf("read the run's history %s: %w", path, err)
	}
	return h, nil
}

// waitFault waits for the run's next message.
func waitFault(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}
