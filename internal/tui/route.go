package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/lab"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// The routes of Update, in its order. Each reports whether msg was its
// to handle.

// input handles the terminal's messages: sizes and the background colour
// go to every screen, keys to the global keys first and then to the
// active screen, mouse events to the active screen.
func (m *Model) input(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m.broadcast(msg), true
	case tea.BackgroundColorMsg:
		m.setStyles(theme.DefaultStyles(msg.IsDark()))
		return m.broadcast(msg), true
	case tea.KeyPressMsg:
		if cmd, done := m.globalKey(msg); done {
			return cmd, true
		}
		return m.updateTop(msg), true
	case tea.MouseMsg:
		return m.updateTop(msg), true
	}
	return nil, false
}

// background handles the results of the root's own work: etcd's start,
// the progress file (written, changed by another process), the whole
// course loaded, the class's verdict on the learner's login, watch mode
// stopping.
func (m *Model) background(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case backgroundMsg:
		return m.opts.Background, true
	case etcdStartMsg:
		cmd := m.etcd.start(m.ctx, m.opts.Etcd)
		return tea.Batch(cmd, m.broadcast(m.etcd.status())), true
	case etcdReadyMsg:
		m.etcd.ready(msg)
		ready := screen.EtcdReady{Etcd: msg.srv, Err: msg.err, External: m.etcd.external}
		return tea.Batch(m.broadcast(m.etcd.status()), m.broadcast(ready)), true
	case classStatusMsg:
		m.classProblem = msg.problem
		return waitClassStatus(m.opts.ClassStatus), true
	case courseLoadedMsg:
		return m.courseLoaded(msg), true
	case lab.WatchStopped:
		return m.watchStopped(msg), true
	}
	return m.progressFile(msg)
}

// progressFile handles the progress file's news: a save finished, or
// another playground changed the file.
func (m *Model) progressFile(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case progressWatchMsg:
		return waitProgressFile(msg.sig), true
	case progressFileChangedMsg:
		return tea.Batch(m.reloadProgressCmd(), waitProgressFile(msg.sig)), true
	case progressReloadedMsg:
		return m.changedIf(m.followFile(msg)), true
	case progressSavedMsg:
		return m.savedProgress(msg), true
	}
	return nil, false
}

// changedIf tells the screens about the progress when it changed.
func (m *Model) changedIf(changed bool) tea.Cmd {
	if !changed {
		return nil
	}
	return m.broadcast(screen.ProgressChanged{Progress: m.prog})
}

// courseLoaded replaces the outline by the whole course and opens the
// screens asked for meanwhile.
func (m *Model) courseLoaded(msg courseLoadedMsg) tea.Cmd {
	m.course, m.loading = msg.course, false
	cmds := []tea.Cmd{m.broadcast(screen.CourseLoaded{Course: msg.course, Problems: len(msg.probs)})}
	for _, p := range m.pending {
		cmds = append(cmds, screen.Send(p))
	}
	m.pending = nil
	return tea.Sequence(cmds...)
}

// watchStopped says why watch mode ended, on the status line.
func (m *Model) watchStopped(msg lab.WatchStopped) tea.Cmd {
	why := "its folder watcher ended"
	if msg.Err != nil {
		why = msg.Err.Error()
	}
	m.setNotice("Watch mode stopped: "+why, true)
	return m.broadcast(msg)
}

// navigate handles the screens' requests for another screen; an Open
// that arrives before the course is loaded waits for it.
func (m *Model) navigate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case screen.OpenLesson, screen.OpenQuiz, screen.OpenLab, screen.OpenExperiment, screen.OpenReview:
		if m.loading {
			m.pending = append(m.pending, msg)
			return nil, true
		}
		return m.open(msg), true
	case screen.Back:
		m.goBack()
		return nil, true
	case screen.Home:
		m.truncate(1)
		return nil, true
	case screen.OpenProgress:
		return m.openProgress(), true
	case screen.ResetProgress:
		return m.resetProgress(msg), true
	}
	return nil, false
}

// progressEvent records what a screen says the learner did (progressChanged);
// the root owns the clock, so times are its own.
func (m *Model) progressEvent(msg tea.Msg) (tea.Cmd, bool) {
	switch msg.(type) {
	case screen.PageShown, screen.CheckAnswered, screen.QuizFinished, screen.ExperimentRan,
		screen.StepModeChosen, screen.TempoChosen, screen.Predicted, screen.LabPassed, screen.LabGraded, screen.Reviewed,
		screen.LabRanUnderFaults:
	default:
		return nil, false
	}
	now := m.now()
	var change func(*progress.Progress)
	switch msg := msg.(type) {
	case screen.PageShown:
		change = func(p *progress.Progress) { p.MarkPageRead(msg.Lesson, msg.Page, now) }
	case screen.CheckAnswered:
		if msg.Answer.At.IsZero() {
			msg.Answer.At = now
		}
		change = func(p *progress.Progress) { p.RecordCheck(msg.Lesson, msg.Question, msg.Answer) }
	case screen.QuizFinished:
		return m.quizFinished(msg), true
	case screen.Reviewed:
		change = func(p *progress.Progress) { p.RecordReview(msg.Question, msg.Right, now) }
	case screen.ExperimentRan:
		change = func(p *progress.Progress) { p.RecordExperimentRun(msg.Name, msg.Shown, now) }
	case screen.LabRanUnderFaults:
		change = func(p *progress.Progress) { p.RecordLabRun(msg.Lab, msg.Schedule, msg.Held, now) }
	case screen.StepModeChosen:
		change = func(p *progress.Progress) { p.SetExperimentMode(msg.Step, now) }
	case screen.TempoChosen:
		change = func(p *progress.Progress) { p.SetExperimentTempo(msg.Tempo, now) }
	case screen.Predicted:
		change = m.predictedReview(msg)
	case screen.LabPassed:
		return m.labGraded(msg.Lab, progress.LabGrade{Status: progress.LabStatusPassed, At: now}), true
	case screen.LabGraded:
		return m.labGraded(msg.Lab, progress.LabGrade{Status: msg.Status, Step: msg.Step, At: now}), true
	}
	return m.progressChanged(change), true
}

// labGraded records how a grade of lab ended, for the lesson it belongs
// to (nothing for a lab the course does not know); a verified pass of the
// watched lab offers the next one.
func (m *Model) labGraded(id string, g progress.LabGrade) tea.Cmd {
	lesson := m.labLesson(id)
	if lesson == "" {
		return nil
	}
	cmd := m.progressChanged(func(p *progress.Progress) { p.RecordLabGrade(lesson, id, g) })
	if g.Status == progress.LabStatusPassed && id == m.watch.Lab() && m.watch.Passed() {
		m.watchPassed(id)
	}
	return cmd
}
