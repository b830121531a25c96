package lab

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
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/timeline"
)

// Your code under faults (x): the screen runs `playground experiment run
// --lab ID --schedule NAME --json --record FILE` as a child process, so
// the learner's code (and the replicas, etcd and checker of the run)
// never run inside the TUI; it shows the child's events as they come,
// then the recorded history's timeline, opened at the violation. r runs
// the reference solution on the same schedule for comparison.

// faultsUI is the state of the faults view.
type faultsUI struct {
	open     bool
	choosing bool
	choice   int          // the schedule picked in the list
	runs     [2]*faultRun // 0: the learner's code, 1: the reference
	showing  int          // which run the view shows
	seq      int          // the newest run's number; older runs' messages are dropped
	program  string       // the playground binary
	stop     func()       // cancels the run in flight
}

// faultRun is one run of the lab's code under a schedule.
type faultRun struct {
	schedule  string
	reference bool
	started   time.Time
	took      time.Duration
	events    []history.Event // as the child reported them
	done      bool
	code      int    // the child's exit status
	stderr    string // what it said there (a compiler's message, a stub's)
	history   *history.History
	view      *timeline.Model
	err       error
	// control is the child's standard input, where faults by hand go
	// (experiment run --control); pick is the replica they go to.
	control *controlPipe
	pick    int
	// replay, if set, is a history file whose faults the run plays
	// (--faults) instead of its schedule: the reference's run on the
	// faults of a by-hand run (startReference).
	replay string
	// ended: the learner ended the by-hand run (e); unsent says which
	// key's line the child had not taken, if the last one was not.
	ended  bool
	unsent string
}

// labHasRunner reports whether the lab's code can play a replica.
func labHasRunner(id string) bool { return experiment.LabScenario(id) != nil }

// faultMsg is one event of a run, faultDoneMsg its end.
type (
	faultMsg struct {
		seq int
		e   history.Event
		ch  <-chan tea.Msg
	}
	faultDoneMsg struct {
		seq     int
		code    int
		stderr  string
		history *history.History
		err     error
	}
)

// openFaults opens the schedule list.
func (m *Model) openFaults() {
	f := &m.faults
	f.open, f.choosing = true, true
	m.layout()
}

// closeFaults stops a run in flight and goes back to the lab.
func (m *Model) closeFaults() {
	m.stopFaultRun()
	m.faults.open = false
	m.layout()
}

func (m *Model) stopFaultRun() {
	if m.faults.stop != nil {
		m.faults.stop()
		m.faults.stop = nil
	}
}

// faultRunning reports whether a run is in flight.
func (m Model) faultRunning() bool {
	r := m.faults.runs[m.faults.showing]
	return r != nil && !r.done
}

// startFaultRun runs the chosen schedule with the learner's code or the
// reference.
func (m *Model) startFaultRun(schedule string, reference bool) tea.Cmd {
	return m.startRun(&faultRun{schedule: schedule, reference: reference})
}

// startRun runs r: its schedule, or the faults of its replay file.
func (m *Model) startRun(r *faultRun) tea.Cmd {
	m.stopFaultRun()
	f := &m.faults
	f.seq++
	f.choosing = false
	slot := 0
	if r.reference {
		slot = 1
	} else {
		f.runs[1] = nil // a new run of yours: the old comparison is gone
	}
	r.started = m.now()
	f.runs[slot] = r
	f.showing = slot
	ctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	m.layout()
	ch := make(chan tea.Msg, 64)
	cmd := m.faultCommand(ctx, r)
	if w, err := cmd.StdinPipe(); err == nil {
		r.control = newControlPipe(ctx, w)
	}
	go runChild(ctx, cmd, f.seq, ch)
	return tea.Batch(waitFault(ch), m.spinFaults())
}

// faultCommand is the child's command line; its --record file is the
// last argument.
func (m Model) faultCommand(ctx context.Context, r *faultRun) *exec.Cmd {
	prog := m.faults.program
	if prog == "" {
		prog = m.opts.Program
	}
	if prog == "" {
		prog, _ = os.Executable()
	}
	record := recordFile()
	args := []string{"experiment", "run", "--lab", m.lab.ID, "--schedule", r.schedule, "--json", "--control"}
	if r.replay != "" {
		args[4], args[5] = "--faults", r.replay
	}
	if r.reference {
		args = append(args, "--reference")
	}
	args = append(args, "--record", record)
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = m.opts.Root // the child finds the learner's checkout from here
	cmd.Env = append(os.Environ(), m.opts.Env...)
	containChild(cmd)
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
	var stderr tailWriter
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		ch <- faultDoneMsg{seq: seq, err: fmt.Errorf("start the run: %w", err)}
		return
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		var e history.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Kind == "" {
			continue // the final verdict line: the history has it
		}
		select {
		case ch <- faultMsg{seq: seq, e: e, ch: ch}:
		case <-ctx.Done():
		}
	}
	werr := cmd.Wait()
	done := faultDoneMsg{seq: seq, stderr: stderr.String()}
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
	case done.err == nil && done.stderr == "":
		// The child said nothing of a failure, so a history was due.
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
	h, err := experiment.ReadHistory(f)
	if err != nil {
		return h, fmt.Errorf("read the run's history %s: %w", path, err)
	}
	return h, nil
}

// waitFault waits for the run's next message.
func waitFault(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}

// faultEvent keeps one event of the run on screen.
func (m *Model) faultEvent(msg faultMsg) tea.Cmd {
	if msg.seq != m.faults.seq {
		return nil
	}
	r := m.faults.runs[m.faults.showing]
	r.events = append(r.events, msg.e) // the layout stays: View draws the newest
	return waitFault(msg.ch)
}

// faultDone takes the run's end: its history, opened at the violation.
func (m *Model) faultDone(msg faultDoneMsg) {
	if msg.seq != m.faults.seq {
		return
	}
	m.faults.stop = nil
	r := m.faults.runs[m.faults.showing]
	r.done, r.code, r.stderr, r.err, r.history = true, msg.code, msg.stderr, msg.err, msg.history
	r.control.close()
	r.took = m.now().Sub(r.started)
	if h := r.history; h != nil && h.Verdict != nil {
		at, shown := time.Duration(-1), *h
		if f, ok := h.Verdict.TimedViolation(); ok {
			at, shown = f.At, markViolation(*h, f)
		}
		v := timeline.OfHistory(m.Styles, shown.Events, experiment.IsLabRun(h.Scenario), at)
		r.view = &v
	}
	m.layout()
}

// markViolation is h with the checker's finding f (the violation its
// verdict is about, at an instant) as an event of the timeline, on the
// lane of the replica that broke the rule, unless the run recorded one
// there itself: a lab's checker judges the whole history once the run
// ended, and a finding such as a key left behind falls between events
// the timeline folds, so without its mark the cursor could not stop on
// it. The recorded history is left as it was.
func markViolation(h history.History, f history.Finding) history.History {
	if !f.Timed {
		return h
	}
	for _, e := range h.Events {
		if e.Kind == history.InvariantViolated && (e.At-f.At).Abs() <= 5*time.Millisecond {
			return h
		}
	}
	i := slices.IndexFunc(h.Events, func(e history.Event) bool { return e.At >= f.At })
	if i < 0 {
		i = len(h.Events)
	}
	mark := history.Event{At: f.At, Kind: history.InvariantViolated, Text: f.Sentence()}
	if len(f.Replicas) > 0 {
		mark.Replica = f.Replicas[0]
	}
	h.Events = slices.Insert(slices.Clone(h.Events), i, mark)
	return h
}

// FaultHistory returns the recorded history of the run the faults view
// shows, once that run has ended with one (its events, with the time the
// run began, and the verdict); false before.
func (m Model) FaultHistory() (history.History, bool) {
	r := m.faults.runs[m.faults.showing]
	if r == nil || !r.done || r.history == nil {
		return history.History{}, false
	}
	return *r.history, true
}

// faultsKey handles a key while the faults view is open.
func (m *Model) faultsKey(msg tea.KeyPressMsg) tea.Cmd {
	k, f := m.keys, &m.faults
	names := experiment.LabScheduleNames()
	if f.choosing {
		switch {
		case key.Matches(msg, k.Up):
			f.choice = (f.choice + len(names) - 1) % len(names)
		case key.Matches(msg, k.Down):
			f.choice = (f.choice + 1) % len(names)
		case key.Matches(msg, k.RunFaults):
			return m.startFaultRun(names[f.choice], false)
		case key.Matches(msg, k.CloseFaults):
			if f.runs[0] == nil {
				m.closeFaults()
				return nil
			}
			f.choosing = false
		}
		m.layout()
		return nil
	}
	mine, ref := f.runs[0], f.runs[1]
	switch {
	case key.Matches(msg, k.CloseFaults):
		m.closeFaults()
		return nil
	case m.faultRunning():
		m.handKey(msg) // esc stops it; the other keys are faults by hand
		return nil
	case key.Matches(msg, k.Reference) && mine != nil && ref == nil:
		return m.startReference(mine)
	case key.Matches(msg, k.Reference) && ref != nil:
		f.showing = 1 - f.showing
	case key.Matches(msg, k.Faults):
		f.choosing = true
	default:
		if r := f.runs[f.showing]; r != nil && r.view != nil {
			v, _ := r.view.Update(msg)
			r.view = &v
		}
	}
	m.layout()
	return nil
}

// spinFaults keeps the spinner turning while a run goes on.
func (m *Model) spinFaults() tea.Cmd {
	if m.spinning {
		return nil
	}
	m.spinning = true
	return m.spinner.Tick
}

// tailWriter keeps the last 8 KiB written to it: a child's standard
// error, bounded.
type tailWriter struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 8<<10; over > 0 {
		t.b = append([]byte(nil), t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
