package lab

import (
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/lab/faults"
	"github.com/ownership-election/playground/internal/tui/text"
)

// Update handles keys and the results of the screen's commands. The root
// sets the size with SetSize; every Update then starts a README rendering
// for a new width if one is needed.
func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	var cmds []tea.Cmd
	graded := m.report
	if m.ownWatch {
		// The root feeds its watch itself; a screen without one feeds its own.
		cmds = append(cmds, m.watch.Update(msg))
	}
	if m.watch.changedBy(msg) {
		m.syncWatch()
		cmds = append(cmds, m.spin())
	}
	cmds = append(cmds, m.handle(msg))
	if c := m.maybeRenderReadme(); c != nil {
		cmds = append(cmds, c)
	}
	if m.report != graded && m.solution != "" {
		// A new grade means a save: the diff follows the learner's file.
		cmds = append(cmds, m.refreshSolutionCmd())
	}
	return m, tea.Batch(cmds...)
}

// handle is the step of update that depends on the message.
func (m *Model) handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		// The size itself comes through SetSize (the root knows how much
		// of the terminal this screen gets); the message only prompts the
		// README to be rendered for the new width at the end of update.
	case screen.EtcdReady:
		m.etcdEnv = etcdEnv(msg)
	case openedMsg:
		m.openDone(msg)
	case readmeRenderedMsg:
		m.readmeDone(msg)
	case spinner.TickMsg:
		return m.spinnerTick(msg)
	case gradeDoneMsg:
		return m.finishGrade(msg)
	case verifyDoneMsg:
		return m.finishVerify(msg)
	case WatchStopped:
		if msg.Lab == m.lab.ID {
			m.setNotice("Watch mode stopped: "+errText(msg.Err), msg.Err != nil)
		}
	case editorDoneMsg:
		return m.editorDone(msg)
	case resetDoneMsg:
		m.resetDone(msg)
	case solutionLoadedMsg:
		m.solutionLoaded(msg)
	case tea.MouseWheelMsg:
		vp := m.activeVP()
		*vp, _ = vp.Update(msg)
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	default:
		if faults.IsMsg(msg) { // a run's events and its end
			return m.faultsUpdate(msg)
		}
	}
	return nil
}

// faultsUpdate gives msg (a key while the view is open, a run's event or
// its end) to the faults view, and keeps the spinner turning while a run
// goes on. An event of a run that goes on leaves the layout as it was:
// View draws the newest events.
func (m *Model) faultsUpdate(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	m.faults, cmd = m.faults.Update(msg)
	if _, key := msg.(tea.KeyPressMsg); key || !m.faults.Running() {
		m.layout()
	}
	if m.faults.Running() && !m.spinning {
		m.spinning = true
		return tea.Batch(cmd, m.spinner.Tick)
	}
	return cmd
}

// openDone takes what Init found: the lab folder, the README.
func (m *Model) openDone(msg openedMsg) {
	if msg.lab != m.lab.ID {
		return
	}
	m.opened, m.labsPresent, m.readmeSrc = true, msg.present, msg.readme
	if !m.labsPresent {
		m.pane = paneResults // the "get the labs" text comes first
	}
	m.layout()
}

// readmeDone keeps a README rendering for its width.
func (m *Model) readmeDone(msg readmeRenderedMsg) {
	if msg.lab != m.lab.ID {
		return
	}
	if m.readmeWant == msg.width {
		m.readmeWant = 0
	}
	if msg.err != nil {
		// Keep the plain text for this width rather than retrying on
		// every message.
		msg.out = text.Wrap(strings.TrimSpace(unwrapMarkdown(m.readmeSrc)), msg.width)
	}
	m.readmeRendered[msg.width] = msg.out
	m.layout()
}

// spinnerTick turns the spinner while a grade or its verification runs, and lets the tick
// chain end after.
func (m *Model) spinnerTick(msg spinner.TickMsg) tea.Cmd {
	if !m.grading && !m.report.verifying() && !m.faults.Running() {
		m.spinning = false
		return nil
	}
	var cmd tea.Cmd
	m.spinner, cmd = m.spinner.Update(msg)
	m.faults.CatchUp() // events that came since the timeline last took some
	m.layout()
	return cmd
}

// editorDone grades once the learner is back from the editor: the moment
// to know where one stands (watch mode grades on the save already).
func (m *Model) editorDone(msg editorDoneMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		m.setNotice("Editor: "+msg.err.Error(), true)
	case !m.watching:
		return m.startGrade()
	}
	return nil
}

// resetDone says where the learner's code went.
func (m *Model) resetDone(msg resetDoneMsg) {
	switch {
	case msg.err != nil:
		m.setNotice(msg.err.Error(), true)
	case msg.backup != "":
		shown := msg.backup
		if rel, err := filepath.Rel(m.opts.Root, msg.backup); err == nil {
			shown = rel
		}
		m.setNotice("Stub reset. Your code is kept in "+shown, false)
	default:
		m.setNotice("The stub was already the original; nothing to keep aside.", false)
	}
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if m.faults.IsOpen() {
		return m.faultsUpdate(msg)
	}
	if m.confirm != confirmNone {
		return m.confirmKey(msg)
	}
	// A notice answers the last key: the next one makes it stale (the
	// cursor moved, another step opened), so it goes; a page scroll,
	// which changes nothing, keeps it.
	if m.notice != "" && msg.String() != "pgup" && msg.String() != "pgdown" {
		m.notice = ""
		m.layout()
	}
	if m.grading && key.Matches(msg, k.Cancel) {
		m.cancelKey()
		return nil
	}
	if m.verifyKeys(msg) || m.stepKeys(msg) || m.solutionKeys(msg) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Pane):
		m.cyclePane(msg.String() == "shift+tab")
		if m.pane == paneSolution {
			return m.refreshSolutionCmd() // the learner may have saved since
		}
		return nil
	case k.Scroll(m.activeVP(), msg):
		return nil
	}
	if !m.labsPresent {
		return nil
	}
	if m.lab.File == "" && (key.Matches(msg, k.Edit) || key.Matches(msg, k.Solution) || key.Matches(msg, k.Reset)) {
		m.setNotice("This lab has no manifest naming its stub file (lab.yaml: file).", true)
		return nil
	}
	switch {
	case key.Matches(msg, k.Grade):
		if m.grading {
			return nil
		}
		if m.watching {
			cmd := m.watch.Grade()
			m.syncWatch()
			return tea.Batch(cmd, m.spin())
		}
		return m.startGrade()
	case key.Matches(msg, k.Watch):
		return m.toggleWatch()
	case key.Matches(msg, k.Faults):
		if !faults.HasRunner(m.lab.ID) {
			m.setNotice("This lab has no runner: its code cannot play a replica under faults.", false)
			return nil
		}
		m.faults.Open()
		m.layout()
	case key.Matches(msg, k.Hint):
		m.nextHint()
	case key.Matches(msg, k.Edit):
		return m.editCmd()
	case key.Matches(msg, k.Solution):
		if m.passed || m.solution != "" {
			return m.loadSolutionCmd()
		}
		m.confirm = confirmSolution
		m.layout()
	case key.Matches(msg, k.Reset):
		m.confirm = confirmReset
		m.layout()
	}
	return nil
}

// cancelKey stops the grading under way: watch mode's (the next save
// grades again) or the one the learner started.
func (m *Model) cancelKey() {
	if m.watching {
		m.watch.Cancel()
		m.syncWatch()
		m.setNotice("Grading cancelled; the next save grades again.", false)
		return
	}
	m.cancelGrade()
}

// confirmKey answers the open question (load the solution, or reset the
// stub): yes does it, no leaves everything as it was.
func (m *Model) confirmKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Yes):
		c := m.confirm
		m.confirm = confirmNone
		m.layout()
		if c == confirmSolution {
			return m.loadSolutionCmd()
		}
		return m.resetCmd()
	case key.Matches(msg, m.keys.No):
		m.confirm = confirmNone
		m.setNotice("Nothing changed.", false)
	}
	return nil
}

func (m *Model) cyclePane(back bool) {
	panes := []pane{paneReadme, paneResults}
	if m.solution != "" {
		panes = append(panes, paneSolution)
	}
	i := 0
	for j, p := range panes {
		if p == m.pane {
			i = j
		}
	}
	if back {
		i = (i + len(panes) - 1) % len(panes)
	} else {
		i = (i + 1) % len(panes)
	}
	m.pane = panes[i]
	m.layout()
}

// startGrade cancels any run in flight and starts a new one; results of the
// old run are ignored by their sequence number.
func (m *Model) startGrade() tea.Cmd {
	cmd := m.begin(m.job(), m.now())
	m.notice = ""
	if m.pane == paneReadme || m.pane == paneSolution && m.solution == "" {
		m.pane = paneResults
	}
	m.layout()
	if m.spinning {
		return cmd
	}
	m.spinning = true
	return tea.Batch(cmd, m.spinner.Tick)
}

func (m *Model) cancelGrade() {
	m.halt() // the cancelled run's result, if it still comes, is dropped
	m.setNotice("Grading cancelled.", false)
}

// finishGrade shows the report of the screen's own grade, and starts its
// verification when every step passed.
func (m *Model) finishGrade(msg gradeDoneMsg) tea.Cmd {
	ok, cmd := m.graded(msg, m.job(), m.now())
	if !ok {
		return nil
	}
	m.verify = verifyUI{} // a report of the last grade's verification is gone
	m.pane = paneResults
	m.afterGrade()
	m.layout()
	m.resultsVP.GotoTop()
	if m.report.verifying() {
		return tea.Batch(cmd, m.startVerify())
	}
	// The first failing step's first hint opens by itself only once the
	// learner asks (h); here we only make sure the failure is on screen.
	return cmd
}

// finishVerify settles a pass with its verification: only a verified pass
// is reported to the root (and so recorded in progress).
func (m *Model) finishVerify(msg verifyDoneMsg) tea.Cmd {
	ok, cmd := m.verified(msg, m.lab.ID)
	if !ok {
		return nil
	}
	m.layout()
	if m.report.verified() {
		m.passed = true
	}
	return cmd
}

func (m Model) hintAvailable() bool {
	i := m.hintStep()
	if i < 0 {
		return false
	}
	s := m.report.Steps[i]
	return m.hintsOpen[s.Test] < len(s.Hints)
}

func (m *Model) nextHint() {
	i := m.hintStep()
	switch {
	case m.report == nil:
		m.setNotice("Grade first (enter): hints open for the first failing step.", false)
		return
	case i < 0 && (m.stepOpen() || m.report.firstFailing() >= 0):
		m.setNotice("This step passes: no hints needed.", false)
		return
	case i < 0:
		m.setNotice("No failing step, no hints needed.", false)
		return
	}
	s := m.report.Steps[i]
	if m.hintsOpen[s.Test] >= len(s.Hints) {
		m.setNotice("That was the last hint for this step.", false)
		return
	}
	m.hintsOpen[s.Test]++
	m.pane = paneResults
	m.notice = ""
	m.layout()
	m.resultsVP.GotoBottom()
}

func (m *Model) setNotice(s string, isErr bool) {
	m.notice, m.noticeErr = s, isErr
	m.layout()
}

func errText(err error) string {
	if err == nil {
		return "the watcher closed"
	}
	return err.Error()
}
