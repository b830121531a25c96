// Package faults is the lab screen's view of the learner's code under
// faults (x): it runs `playground experiment run --lab ID --schedule NAME
// --json --record FILE` as a child process, so the learner's code (and
// the replicas, etcd and checker of the run) never run inside the TUI;
// it shows the child's events as they come, then the recorded history's
// timeline, opened at the violation. r runs the reference solution on
// the same schedule for comparison. The lab screen owns one and routes
// to it while it is open.
package faults

import (
	"context"
	"slices"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/internal/tui/timeline"
)

// Options configure the view.
type Options struct {
	// Lab is the id of the lab whose code runs.
	Lab string
	// Root is the learner's checkout, where the child runs.
	Root string
	// Env is added to the child's environment.
	Env []string
	// Program is the playground binary the child runs; empty means this
	// program (os.Executable).
	Program string
	// Now is the clock for elapsed times; nil means time.Now.
	Now func() time.Time
}

// Model is the faults view: the schedule list, a run as it goes, and the
// ended runs (the learner's and the reference's) with their timelines.
type Model struct {
	opts          Options
	keys          KeyMap
	styles        theme.Styles
	width, height int
	spinner       string // the lab screen's spinner, drawn beside a run

	open     bool
	choosing bool
	choice   int          // the schedule picked in the list
	runs     [2]*faultRun // 0: the learner's code, 1: the reference
	showing  int          // which run the view shows
	seq      int          // the newest run's number; older runs' messages are dropped
	stop     func()       // cancels the run in flight
}

// faultRun is one run of the lab's code under a schedule.
type faultRun struct {
	schedule    string
	reference   bool
	started     time.Time
	took        time.Duration
	events      []history.Event // as the child reported them
	done        bool
	code        int    // the child's exit status
	stderr      string // what it said there (a compiler's message, a stub's)
	history     *history.History
	build       *labrun.BuildProgress // the build's progress, as the child last said
	live        *timeline.Model       // the events so far, while the run goes on (follow)
	followed    time.Time             // when live last took the events
	followedLen int                   // ... and how many there were then
	seen        handSeen              // the replicas and their states, for the fault keys
	view        *timeline.Model
	err         error
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
	// explore is an ended exploration's report and view (explore.go).
	explore *exploreView
}

// New is the faults view of opts.Lab, closed, drawn with st.
func New(opts Options, st theme.Styles) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return Model{opts: opts, keys: DefaultKeyMap(), styles: st, width: 80, height: 20}
}

// HasRunner reports whether lab's code can play a replica.
func HasRunner(lab string) bool { return labrun.Scenario(lab) != nil }

// faultMsg is one event of a run, faultDoneMsg its end.
type (
	faultMsg struct {
		seq int
		e   history.Event
		// build, if set, is how far the build of the replica program
		// has come (the child's {"kind":"build"} line), not an event.
		build *labrun.BuildProgress
		ch    <-chan tea.Msg
	}
	faultDoneMsg struct {
		seq     int
		code    int
		stderr  string
		history *history.History
		err     error
		explore *exploreView // explore's report line, if the run was one
	}
)

// IsMsg reports whether msg is one of the view's own messages (a run's
// event or its end), which the lab screen gives it whether it is open or
// not.
func IsMsg(msg tea.Msg) bool {
	switch msg.(type) {
	case faultMsg, faultDoneMsg, exploreStepMsg:
		return true
	}
	return false
}

// SetStyles replaces the styles.
func (m *Model) SetStyles(st theme.Styles) { m.styles = st }

// SetSize gives the view its drawing area.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetSpinner is the frame of the spinner the view draws beside a run
// that goes on: the lab screen's, which turns while one does (Running).
func (m *Model) SetSpinner(frame string) { m.spinner = frame }

// IsOpen reports whether the view is open: the lab screen then routes
// its keys here and draws it.
func (m Model) IsOpen() bool { return m.open }

// Open opens the schedule list.
func (m *Model) Open() { m.open, m.choosing = true, true }

// Close stops a run in flight and goes back to the lab.
func (m *Model) Close() {
	m.Stop()
	m.open = false
}

// Stop stops the run in flight, if any: call it when the lab screen
// closes.
func (m *Model) Stop() {
	if m.stop != nil {
		m.stop()
		m.stop = nil
	}
}

// Running reports whether a run is in flight.
func (m Model) Running() bool {
	r := m.runs[m.showing]
	return r != nil && !r.done
}

// startFaultRun runs the chosen schedule with the learner's code or the
// reference.
func (m *Model) startFaultRun(schedule string, reference bool) tea.Cmd {
	return m.startRun(&faultRun{schedule: schedule, reference: reference})
}

// startRun runs r: its schedule, or the faults of its replay file.
func (m *Model) startRun(r *faultRun) tea.Cmd {
	m.Stop()
	m.seq++
	m.choosing = false
	slot := 0
	if r.reference {
		slot = 1
	} else {
		m.runs[1] = nil // a new run of yours: the old comparison is gone
	}
	r.started = m.opts.Now()
	m.runs[slot] = r
	m.showing = slot
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	ch := make(chan tea.Msg, 64)
	cmd := m.faultCommand(ctx, r)
	if w, err := cmd.StdinPipe(); err == nil {
		r.control = newControlPipe(ctx, w)
	}
	go runChild(ctx, cmd, m.seq, ch)
	return waitFault(ch)
}

// Update takes the run's events and its end, and the keys while the view
// is open.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case faultMsg:
		return m, m.faultEvent(msg)
	case faultDoneMsg:
		return m, m.faultDone(msg)
	case exploreStepMsg:
		return m, m.exploreStep(msg)
	case tea.KeyPressMsg:
		if m.open {
			return m, m.faultsKey(msg)
		}
	}
	return m, nil
}

// faultEvent keeps one event of the run on screen.
func (m *Model) faultEvent(msg faultMsg) tea.Cmd {
	if msg.seq != m.seq {
		return nil
	}
	r := m.runs[m.showing]
	if msg.build != nil {
		r.build = msg.build
		return waitFault(msg.ch)
	}
	r.events = append(r.events, msg.e)
	if r.live == nil || m.opts.Now().Sub(r.followed) >= liveEvery {
		m.follow(r)
	}
	return waitFault(msg.ch)
}

// faultDone takes the run's end: its history, opened at the violation;
// a judged run of the learner's code goes to progress.
func (m *Model) faultDone(msg faultDoneMsg) tea.Cmd {
	if msg.seq != m.seq {
		return nil
	}
	m.stop = nil
	r := m.runs[m.showing]
	r.done, r.code, r.stderr, r.err, r.history = true, msg.code, msg.stderr, msg.err, msg.history
	r.control.close()
	r.took = m.opts.Now().Sub(r.started)
	if h := r.history; h != nil && h.Verdict != nil {
		at, shown := time.Duration(-1), *h
		if f, ok := h.Verdict.TimedViolation(); ok {
			at, shown = f.At, markViolation(*h, f)
		}
		r.view = m.finishedTimeline(shown.Events, h.Scenario, at)
		r.explore = msg.explore
		m.exploreDone(r)
		if !r.reference && msg.err == nil {
			return screen.Send(screen.LabRanUnderFaults{Lab: m.opts.Lab, Schedule: r.schedule, Held: h.Verdict.Showed})
		}
	}
	return nil
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

// History returns the recorded history of the run the view shows, once
// that run has ended with one (its events, with the time the run began,
// and the verdict); false before.
func (m Model) History() (history.History, bool) {
	r := m.runs[m.showing]
	if r == nil || !r.done || r.history == nil {
		return history.History{}, false
	}
	return *r.history, true
}

// Seen is what the view has of one run: the events its child reported
// so far, its recorded history once it ended with one, and its timeline.
type Seen struct {
	Events   []history.Event
	History  *history.History
	Timeline *timeline.Model
}

// Run is what the view has of the learner's run (reference false) or of
// the reference's; false when there is none.
func (m Model) Run(reference bool) (Seen, bool) {
	r := m.runs[0]
	if reference {
		r = m.runs[1]
	}
	if r == nil {
		return Seen{}, false
	}
	return Seen{Events: r.events, History: r.history, Timeline: r.view}, true
}

// faultsKey handles a key while the view is open.
func (m *Model) faultsKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	names := listNames()
	if m.choosing {
		switch {
		case key.Matches(msg, k.Up):
			m.choice = (m.choice + len(names) - 1) % len(names)
		case key.Matches(msg, k.Down):
			m.choice = (m.choice + 1) % len(names)
		case key.Matches(msg, k.Run):
			return m.startFaultRun(names[m.choice], false)
		case key.Matches(msg, k.Back):
			if m.runs[0] == nil {
				m.Close()
				return nil
			}
			m.choosing = false
		}
		return nil
	}
	mine, ref := m.runs[0], m.runs[1]
	switch {
	case key.Matches(msg, k.Back):
		m.Close()
	case m.Running():
		m.runningKey(msg)
	case key.Matches(msg, k.Reference) && mine != nil && mine.schedule == exploreEntry:
		// An exploration ran the reference on each failing fault itself.
	case key.Matches(msg, k.Reference) && mine != nil && ref == nil:
		return m.startReference(mine)
	case key.Matches(msg, k.Reference) && ref != nil:
		m.showing = 1 - m.showing
	case key.Matches(msg, k.Schedules):
		m.choosing = true
	default:
		if ok, cmd := m.exploreKey(msg); ok {
			return cmd
		}
		if r := m.runs[m.showing]; r != nil && r.view != nil {
			v, _ := r.view.Update(msg)
			r.view = &v
		}
	}
	return nil
}

// runningKey handles a key while a run goes on: the timeline's keys move
// its cursor back over what happened so far (end follows the run again),
// the others are faults by hand (esc, which stops the run, is the lab
// screen's).
func (m *Model) runningKey(msg tea.KeyPressMsg) {
	r := m.runs[m.showing]
	if r.live != nil && r.live.Handles(msg) {
		v, _ := r.live.Update(msg)
		r.live = &v
		return
	}
	m.handKey(msg)
	if r.live != nil {
		m.follow(r) // the pick may have moved
	}
}
