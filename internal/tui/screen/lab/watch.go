package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// Watch is watch mode: it follows one lab folder and grades the lab again
// after every burst of saves, in the background, whichever screen the
// learner is on, the way rustlings follows its exercises. There is one
// Watch at a time and one watched lab: starting it for another lab moves
// it.
//
// The root model owns the Watch: it passes it to every lab screen as
// Options.Watch, feeds it every message it gives the screens (Update),
// draws its Status on every screen and closes it when the program ends.
// Grades are reported like the lab screen's own, as screen.LabPassed and
// screen.LabGraded; a watch that ends by itself (its folder went away)
// says so with WatchStopped. The lab screen of the watched lab shows the
// Watch's grades instead of grading itself.
//
// While nothing is saved, a Watch costs one goroutine blocked on the file
// system's events: no timer runs.
type Watch struct {
	opts Options
	now  func() time.Time

	lab  lessons.Lab
	on   bool
	gen  int                // bumped by every Start and Stop: stale events are dropped
	stop context.CancelFunc // ends the folder watcher

	// gradeRun grades the watched lab, as the lab screen grades its own.
	gradeRun

	etcdEnv []string // the graders' etcd variable, once the TUI's etcd runs
}

// WatchStopped says watch mode ended by itself (the lab folder went away,
// the file system would not watch it): Err says why.
type WatchStopped struct {
	Lab string
	Err error
}

// NewWatch returns a Watch that is off. It uses opts' Root, Env, Timeout,
// Debounce and Now.
func NewWatch(opts Options) *Watch {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Watch{opts: opts, now: now}
}

// Lab is the id of the watched lab, "" when watch mode is off.
func (w *Watch) Lab() string {
	if w == nil || !w.on {
		return ""
	}
	return w.lab.ID
}

// Passed reports whether the watched lab's latest grade is a verified pass.
func (w *Watch) Passed() bool { return w.Lab() != "" && w.report.verified() }

// Grading reports whether a grade of the watched lab is running (its
// verification included).
func (w *Watch) Grading() bool { return w.Lab() != "" && (w.grading || w.report.verifying()) }

type (
	// watchStartedMsg says the folder watcher of generation gen is
	// running (events), or could not start (err).
	watchStartedMsg struct {
		gen    int
		events <-chan struct{}
		err    error
	}
	// watchEventMsg is one burst of saves.
	watchEventMsg struct {
		gen    int
		events <-chan struct{}
	}
	// watchClosedMsg says the folder watcher's events ended.
	watchClosedMsg struct{ gen int }
)

// Start watches lab l (moving watch mode from the lab watched before, if
// any) and grades it once right away, while the folder watcher starts.
func (w *Watch) Start(l lessons.Lab) tea.Cmd {
	w.Stop()
	w.lab, w.on = l, true
	w.report, w.gradedAt = nil, time.Time{}
	ctx, stop := context.WithCancel(context.Background())
	w.stop = stop
	gen, dir := w.gen, w.dir()
	debounce := w.opts.Debounce
	if debounce <= 0 {
		debounce = defaultDebounce
	}
	start := func() tea.Msg {
		ch, err := grade.Watch(ctx, dir, debounce)
		return watchStartedMsg{gen: gen, events: ch, err: err}
	}
	return tea.Batch(start, w.Grade())
}

func (w *Watch) dir() string { return labDir(w.opts.Root, w.lab.ID) }

// Stop ends watch mode and the grade it runs, if any.
func (w *Watch) Stop() {
	if w == nil {
		return
	}
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	w.Cancel()
	w.on = false
	w.gen++
}

// Close stops watch mode for good: call it when the program ends.
func (w *Watch) Close() { w.Stop() }

// Cancel stops the grade in flight, if any; watch mode goes on.
func (w *Watch) Cancel() { w.halt() }

// Grade grades the watched lab now, cancelling a grade in flight.
func (w *Watch) Grade() tea.Cmd {
	if !w.on {
		return nil
	}
	return w.begin(w.job(), w.now())
}

// job is what the watch's grade runs: the watched lab.
func (w *Watch) job() gradeJob {
	return gradeJob{kit: w.opts.Course, opts: w.gradeOptions(), lab: w.lab}
}

func (w *Watch) gradeOptions() grade.Options {
	env := append(slices.Clone(w.opts.Env), w.etcdEnv...)
	return grade.Options{Dir: w.opts.Root, Lab: w.lab.ID, Timeout: w.opts.Timeout, Env: env}
}

// Update takes every message the root gives the screens and handles the
// Watch's own; it returns the commands that follow.
func (w *Watch) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case screen.EtcdReady:
		w.etcdEnv = etcdEnv(msg)
	case watchStartedMsg:
		if msg.gen != w.gen || !w.on {
			return nil
		}
		if msg.err != nil {
			return w.stopped(msg.err)
		}
		return waitEvents(msg.gen, msg.events)
	case watchEventMsg:
		if msg.gen != w.gen || !w.on {
			return nil
		}
		return tea.Batch(waitEvents(msg.gen, msg.events), w.Grade())
	case watchClosedMsg:
		if msg.gen != w.gen || !w.on {
			return nil
		}
		return w.stopped(fmt.Errorf("watch %s: the file system stopped reporting saves", w.dir()))
	case gradeDoneMsg:
		_, cmd := w.graded(msg, w.job(), w.now())
		return cmd
	case verifyDoneMsg:
		_, cmd := w.verified(msg, w.lab.ID)
		return cmd
	}
	return nil
}

// changedBy reports whether msg changed watch mode's state, once Update
// had it: the screen of the watched lab then shows the change.
func (w *Watch) changedBy(msg tea.Msg) bool {
	switch msg.(type) {
	case watchStartedMsg, watchEventMsg, watchClosedMsg, WatchStopped:
		return true
	}
	return w.owns(msg)
}

// stopped ends a watch that cannot go on, and says why.
func (w *Watch) stopped(err error) tea.Cmd {
	id := w.lab.ID
	w.Stop()
	return screen.Send(WatchStopped{Lab: id, Err: err})
}

// waitEvents waits for the next burst of saves; it returns when the
// folder watcher ends, so it never outlives watch mode.
func waitEvents(gen int, ch <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return watchClosedMsg{gen: gen}
		}
		return watchEventMsg{gen: gen, events: ch}
	}
}

// Status is one line on what watch mode last did, for the root's status
// line: "watch 03_lease: step 2/5 failing · 14:03"; "" when it is off.
// When that does not fit in width it gives shorter forms ("watch 03_lease:
// step 2/5 failing", then "03_lease ✗ 2/5"), and cuts the shortest only
// when even that does not fit.
func (w *Watch) Status(st theme.Styles, width int) string {
	if w.Lab() == "" {
		return ""
	}
	style := st.Muted
	switch {
	case w.grading || w.report.verifying():
		style = st.Accent
	case w.report.verified():
		style = st.Success
	case w.report != nil:
		style = st.Warning
	}
	return style.Render(text.FirstFit(width, w.status(), w.statusNoTime(), w.statusShort()))
}

// StatusMinWidth is the width of the shortest form of Status: the room the
// root keeps for it before cutting it.
func (w *Watch) StatusMinWidth() int {
	if w.Lab() == "" {
		return 0
	}
	return ansi.StringWidth(w.statusShort())
}

// statusNoTime is status without the time of the grade.
func (w *Watch) statusNoTime() string {
	s := w.status()
	if i := strings.LastIndex(s, " · "); i > 0 && w.report != nil && !w.grading {
		return s[:i]
	}
	return s
}

// statusShort is the lab and a sign: "03_lease ✗ 2/5", "03_lease ✓".
func (w *Watch) statusShort() string {
	id, r := w.lab.ID, w.report
	switch {
	case w.grading:
		return id + " grading…"
	case r == nil:
		return id + " waiting"
	case r.verified():
		return id + " ✓"
	case r.verifying():
		return id + " verifying…"
	case r.allPassed():
		return id + " ✗ unverified"
	case r.unsound():
		return id + " ✗ " + string(r.Lab.Status)
	case r.Err != nil:
		return id + " ✗ error"
	case len(r.BuildErrors) > 0:
		return id + " ✗ build"
	case r.TimedOut:
		return id + " ✗ timeout"
	}
	if i := r.firstFailing(); i >= 0 {
		return id + fmt.Sprintf(" ✗ %d/%d", i+1, len(r.Steps))
	}
	return id + " ✗"
}

func (w *Watch) status() string {
	head := "watch " + w.lab.ID + ": "
	r := w.report
	if w.grading {
		return head + "grading…"
	}
	if r == nil {
		return head + "waiting for a save" // the first grade was cancelled
	}
	at := " · " + w.gradedAt.Format("15:04")
	n := len(r.Steps)
	switch {
	case r.verified():
		return head + "✓ passed (verified)"
	case r.verifying():
		return head + "first run clean, verifying…"
	case r.allPassed():
		return head + "not verified (the race-checked runs did not end)" + at
	case r.unsound():
		return head + string(r.Lab.Status) + ", not passed" + at
	case r.Err != nil:
		return head + "could not grade" + at
	case len(r.BuildErrors) > 0:
		return head + "does not compile" + at
	case r.TimedOut:
		if i := r.firstFailing(); i >= 0 {
			return head + fmt.Sprintf("timed out at step %d/%d", i+1, n) + at
		}
		return head + "timed out" + at
	}
	if i := r.firstFailing(); i >= 0 {
		return head + fmt.Sprintf("step %d/%d failing", i+1, n) + at
	}
	return head + "failing" + at
}
