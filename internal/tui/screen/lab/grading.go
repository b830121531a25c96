package lab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/lessons"
)

// defaultDebounce is the quiet time after a burst of saves before watch
// mode re-grades: editors write a file in several steps.
const defaultDebounce = 300 * time.Millisecond

func (m Model) gradeOptions() grade.Options {
	env := append(slices.Clone(m.opts.Env), m.etcdEnv...)
	return grade.Options{Dir: m.opts.Root, Lab: m.lab.ID, Timeout: m.opts.Timeout, Env: env}
}

// etcdEnv is the graders' etcd variable for the etcd the TUI started: the
// etcd labs' graders then need not start one of their own for every
// grading. An external cluster reaches them through Options.Env instead.
func etcdEnv(msg screen.EtcdReady) []string {
	if msg.Err == nil && msg.Etcd != nil && !msg.External {
		return []string{grade.EtcdEnv(msg.Etcd.Endpoints())}
	}
	return nil
}

// labDir is where lab id lives in the checkout at root; "" without one.
func labDir(root, id string) string {
	if root == "" {
		return ""
	}
	return filepath.Join(root, "labs", id)
}

// job is what the screen's grade runs: this lab, with the screen's
// options.
func (m Model) job() gradeJob {
	return gradeJob{kit: m.opts.Course, opts: m.gradeOptions(), lab: m.lab}
}

// courseOptions turns options for a checkout into options that build the
// lab from the course's own files with only the checkout's stub in them
// (grade.Course); a lab folder that cannot be graded so is an error.
func courseOptions(kit *grade.Course, o grade.Options) (grade.Options, func(), error) {
	if kit == nil {
		kit = grade.Builtin()
	}
	sub, err := kit.FromCheckout(o.Dir, o.Lab, o.Overlay)
	if err != nil {
		return o, nil, err
	}
	return kit.Prepare(sub, o)
}

// runGrade grades lab with o; it blocks.
func runGrade(ctx context.Context, kit *grade.Course, o grade.Options, lab lessons.Lab) report {
	o, cleanup, err := courseOptions(kit, o)
	if err != nil {
		return toReport(lab, nil, err)
	}
	defer cleanup()
	rep, err := grade.Grade(ctx, o, grade.StepSpecs(lab))
	return toReport(lab, rep, err)
}

// runVerify verifies a passing grade (grade.Verify) on a copy of rep and
// returns the copy; it blocks.
func runVerify(ctx context.Context, kit *grade.Course, o grade.Options, rep *grade.Report) *grade.Report {
	cp := *rep
	cp.Steps = slices.Clone(rep.Steps) // Verify marks the steps it fails; the screen reads rep meanwhile
	o, cleanup, err := courseOptions(kit, o)
	if err != nil {
		cp.Status, cp.Err, cp.Message = grade.LabError, err, err.Error()
		return &cp
	}
	defer cleanup()
	if err := grade.Verify(ctx, o, &cp); err != nil && ctx.Err() != nil {
		cp.Status = grade.LabCanceled
	}
	return &cp
}

// gradedCmd tells the root how a grade of lab without a verified pass
// ended, for the learner's progress; nil for a cancelled run.
func gradedCmd(lab string, r *report) tea.Cmd {
	if r == nil || r.Canceled || (r.Lab != nil && r.Lab.Status == grade.LabCanceled) {
		return nil
	}
	end := grade.LabFailed
	switch {
	case r.Err != nil:
		end = grade.LabError
	case r.unsound():
		end = r.Lab.Status
	}
	status, ok := progressStatus(end)
	if !ok {
		return nil
	}
	step := ""
	if i := r.firstFailing(); i >= 0 {
		step = fmt.Sprintf("step %d (%s)", i+1, r.Steps[i].Title)
	}
	return screen.Send(screen.LabGraded{Lab: lab, Status: status, Step: step})
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

// toggleWatch turns watch mode on for this lab, moving it from the lab
// watched before if any (one lab is watched at a time): it grades once
// right away, then after every burst of saves, whatever screen the
// learner is on. On the watched lab, it turns watch mode off.
func (m *Model) toggleWatch() tea.Cmd {
	if m.watching {
		m.watch.Stop()
		m.syncWatch()
		m.setNotice("Watch mode off.", false)
		return nil
	}
	m.halt() // the screen's own grade gives way to the watch's
	// The header and the root's status line name the lab watched now.
	cmd := m.watch.Start(m.lab)
	m.syncWatch()
	return tea.Batch(cmd, m.spin())
}

// syncWatch mirrors watch mode on the screen: while it watches this lab,
// the screen shows its grades as its own.
func (m *Model) syncWatch() {
	w := m.watch
	if w.Lab() != m.lab.ID {
		if m.watching {
			m.watching, m.grading = false, false
			m.layout()
		}
		return
	}
	m.watching = true
	switch {
	case w.grading && (!m.grading || !m.gradeFrom.Equal(w.gradeFrom)):
		m.grading, m.gradeFrom = true, w.gradeFrom
		m.notice = ""
		if m.pane == paneReadme || m.pane == paneSolution && m.solution == "" {
			m.pane = paneResults
		}
	case !w.grading:
		m.grading = false
	}
	fresh := w.report != nil && w.report != m.report
	if fresh {
		m.report, m.gradedAt = w.report, w.gradedAt
		m.pane = paneResults
		m.notice = ""
		m.afterGrade()
	}
	if m.report.verified() {
		m.passed = true
	}
	m.layout()
	if fresh {
		m.resultsVP.GotoTop()
	}
}

// spin starts the spinner's tick chain while a grade runs, unless one is
// alive.
func (m *Model) spin() tea.Cmd {
	if !m.grading || m.spinning {
		return nil
	}
	m.spinning = true
	return m.spinner.Tick
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
// the program ends. kit is what the labs are built from (nil: the
// course this binary embeds). The machine may be small: the labs are compiled in
// sequence, not all at once.
func Prewarm(ctx context.Context, kit *grade.Course, root string, labIDs []string) tea.Cmd {
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
			co, cleanup, err := courseOptions(kit, o)
			if err != nil {
				return PrewarmedMsg{Lab: o.Lab, Err: err}
			}
			defer cleanup()
			err = grade.Warm(ctx, co)
			return PrewarmedMsg{Lab: o.Lab, Took: time.Since(start), Err: err}
		})
	}
	return tea.Sequence(cmds...)
}
