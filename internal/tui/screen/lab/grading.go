package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

// defaultDebounce is the quiet time after a burst of saves before watch
// mode re-grades: editors write a file in several steps.
const defaultDebounce = 300 * time.Millisecond

func (m Model) gradeOptions() grade.Options {
	env := append(slices.Clone(m.opts.Env), m.etcdEnv...)
	return grade.Options{Dir: m.opts.Root, Lab: m.lab.ID, Timeout: m.opts.Timeout, Env: env}
}

// gradeCmd runs the lab's tests, exactly like `go test ./labs/<id>/`, off
// the UI goroutine.
func (m Model) gradeCmd(ctx context.Context, seq int) tea.Cmd {
	o, lab := m.gradeOptions(), m.lab
	return func() tea.Msg {
		rep, err := grade.Grade(ctx, o, stepSpecs(lab))
		return gradeDoneMsg{seq: seq, report: toReport(lab, rep, err)}
	}
}

// verifyDoneMsg carries the verification of the grade with sequence seq.
type verifyDoneMsg struct {
	seq int
	lab *grade.Report
}

// verifyCmd re-runs a passing lab under the race detector, several times
// (grade.Verify), off the UI goroutine; it works on a copy of the report.
func (m Model) verifyCmd(ctx context.Context, seq int, rep *grade.Report) tea.Cmd {
	o := m.gradeOptions()
	cp := *rep
	return func() tea.Msg {
		if err := grade.Verify(ctx, o, &cp); err != nil && ctx.Err() != nil {
			cp.Status = grade.LabCanceled
		}
		return verifyDoneMsg{seq: seq, lab: &cp}
	}
}

func stepSpecs(lab lessons.Lab) []grade.StepSpec {
	out := make([]grade.StepSpec, len(lab.Steps))
	for i, s := range lab.Steps {
		out[i] = grade.StepSpec{Test: s.Test, Title: s.Title}
	}
	return out
}

// toReport joins a grade report with the manifest's step titles and hints.
func toReport(lab lessons.Lab, rep *grade.Report, err error) report {
	r := report{Lab: rep}
	for _, s := range lab.Steps {
		r.Steps = append(r.Steps, newStep(s))
	}
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		r.Canceled = true
		return r
	case err != nil:
		r.Err = err
		return r
	case rep == nil || rep.Result == nil:
		r.Err = fmt.Errorf("grade lab %s: no result", lab.ID)
		return r
	}
	res := rep.Result
	r.Elapsed = res.Elapsed
	r.RunPassed = res.Passed
	r.TimedOut = res.TimedOut
	r.Message = res.Message
	for _, e := range res.BuildErrors {
		r.BuildErrors = append(r.BuildErrors, e.String())
	}
	if res.BuildFailed && len(r.BuildErrors) == 0 {
		// Not a positioned compiler error (a missing package, a bad
		// go.mod): the summary is all there is.
		r.BuildErrors = append(r.BuildErrors, res.Message)
	}
	for i, s := range rep.Steps {
		if i >= len(r.Steps) {
			break
		}
		r.Steps[i].Step = s
	}
	return r
}

type watchStartedMsg struct {
	gen    int
	events <-chan struct{}
	stop   context.CancelFunc
	err    error
}

// toggleWatch turns watch mode on (grading once right away, then on every
// burst of saves in the lab folder) or off.
func (m *Model) toggleWatch() tea.Cmd {
	m.watchGen++
	if m.watching || m.watchStop != nil {
		if m.watchStop != nil {
			m.watchStop()
			m.watchStop = nil
		}
		m.watching = false
		m.setNotice("Watch mode off.", false)
		return nil
	}
	m.watching = true
	m.layout()
	gen, dir := m.watchGen, m.labDir
	debounce := m.opts.Debounce
	if debounce <= 0 {
		debounce = defaultDebounce
	}
	return func() tea.Msg {
		ctx, stop := context.WithCancel(context.Background())
		ch, err := grade.Watch(ctx, dir, debounce)
		if err != nil {
			stop()
			return watchStartedMsg{gen: gen, err: err}
		}
		return watchStartedMsg{gen: gen, events: ch, stop: stop}
	}
}

func (m *Model) watchStarted(msg watchStartedMsg) tea.Cmd {
	if msg.gen != m.watchGen || !m.watching {
		if msg.stop != nil {
			msg.stop() // switched off before it started
		}
		return nil
	}
	if msg.err != nil {
		m.watching = false
		m.setNotice("Watch mode: "+msg.err.Error(), true)
		return nil
	}
	m.watchStop = msg.stop
	return tea.Batch(m.waitWatchCmd(msg.gen, msg.events), m.startGrade())
}

func (m Model) waitWatchCmd(gen int, ch <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return watchStoppedMsg{gen: gen}
		}
		return watchEventMsg{gen: gen, events: ch}
	}
}

// PrewarmedMsg reports that a lab's tests were compiled in the background
// (Err says why not), so its first grade will not wait for the compiler.
type PrewarmedMsg struct {
	Lab  string
	Took time.Duration
	Err  error
}

// Prewarm compiles the tests of the given labs one after the other, in the
// background, so that the learner's first grade is fast; then their race
// builds, so that verifying a pass is too. It returns nil when
// root holds no labs (an installed binary run outside a checkout). Each lab
// answers with a PrewarmedMsg; the root may ignore them. Cancel ctx when
// the program ends. The machine may be small: the labs are compiled in
// sequence, not all at once.
func Prewarm(ctx context.Context, root string, labIDs []string) tea.Cmd {
	if root == "" || len(labIDs) == 0 {
		return nil
	}
	cmds := make([]tea.Cmd, 0, 2*len(labIDs))
	// First the plain builds (the first grading), then the race builds
	// (the verification of a pass).
	var opts []grade.Options
	for _, race := range []bool{false, true} {
		for _, id := range labIDs {
			opts = append(opts, grade.Options{Dir: root, Lab: id, Race: race})
		}
	}
	for _, o := range opts {
		cmds = append(cmds, func() tea.Msg {
			if ctx.Err() != nil {
				return PrewarmedMsg{Lab: o.Lab, Err: ctx.Err()}
			}
			start := time.Now()
			err := grade.Warm(ctx, o)
			return PrewarmedMsg{Lab: o.Lab, Took: time.Since(start), Err: err}
		})
	}
	return tea.Sequence(cmds...)
}
