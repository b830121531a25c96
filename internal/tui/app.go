// Package tui is the playground's terminal interface: a root model that
// owns the screens (course map, lesson reader, quiz, lab runner, experiment
// slot), routes messages to the active one, and keeps the learner's
// progress and the etcd status.
package tui

import (
	"context"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// state is the screen on top.
type state int

const (
	stateHome state = iota
	stateReader
	stateQuiz
	stateLab
	stateExperiment
)

// Options configure the TUI. Course is required; everything else has a
// usable zero value.
type Options struct {
	Course *lessons.Course
	// Progress is the learner's saved progress (progress.Load) and
	// ProgressNotice what went wrong reading it, shown on the home screen.
	Progress       *progress.Progress
	ProgressNotice string
	// ProgressPath is where progress is saved; empty disables saving.
	ProgressPath string
	// ProgressSaved, if set, is called (off the UI goroutine) with each
	// snapshot once it is on disk: the class board's publisher.
	ProgressSaved func(*progress.Progress)
	// Learner seeds the per-learner option shuffle of quizzes.
	Learner string
	// Etcd starts or connects to etcd in the background after the first
	// frame; nil leaves the status as "not started".
	Etcd EtcdStarter
	// EtcdExternal says Etcd connects to an existing cluster rather than
	// starting the embedded one.
	EtcdExternal bool
	// EtcdLogPath is where etcd writes its log, shown when it fails.
	EtcdLogPath string
	// Lab builds the lab runner screen for a lab; nil shows a screen that
	// explains how to run the labs.
	Lab LabFactory
	// Experiment builds the screen for a named experiment; nil shows how to
	// run experiments headless.
	Experiment ExperimentFactory
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// EtcdDelay is how long after start etcd waits before starting, so the
	// first frame is drawn first; zero means 100ms.
	EtcdDelay time.Duration
	// Background is work to start once the learner has the screen, such as
	// compiling the labs' tests ahead of the first grade; it runs a second
	// after start. Its messages go to the screen on top.
	Background tea.Cmd
}

// Screen is a child screen that the root can host without knowing it: the
// lab runner and the experiment view plug in through it.
type Screen interface {
	Update(tea.Msg) (Screen, tea.Cmd)
	View() string
	SetSize(w, h int)
	SetStyles(theme.Styles)
	help.KeyMap
	// Capturing reports that the screen needs esc itself right now (to
	// cancel something or answer a question), so the root must not go back.
	Capturing() bool
	// Close releases what the screen holds (watchers, running commands).
	Close()
}

// LabFactory builds the lab runner for lab, with passed telling whether
// the learner already passed it.
type LabFactory func(lab *lessons.Lab, passed bool, st theme.Styles) (Screen, tea.Cmd)

// ExperimentFactory builds the screen for the experiment called name. etcd
// is nil while it is still starting (or when it failed); the screen then
// gets an EtcdReadyMsg once it is known.
type ExperimentFactory func(name string, etcd Etcd, st theme.Styles) (Screen, tea.Cmd)

// EtcdReadyMsg reaches an open lab or experiment screen when the etcd start
// finishes: Etcd is the running server, or Err why it failed.
type EtcdReadyMsg struct {
	Etcd Etcd
	Err  error
}

// Model is the root model.
type Model struct {
	opts   Options
	course *lessons.Course
	prog   *progress.Progress
	styles theme.Styles
	keys   theme.GlobalKeys
	help   help.Model
	now    func() time.Time

	width, height int
	state         state
	back          []state // screens to return to with esc
	showHelp      bool
	notice        string // one line shown at the bottom until the next key
	noticeIsErr   bool

	etcd  etcdState
	saver *saver

	home   homeModel
	reader readerModel
	quiz   quizModel
	child  Screen // lab runner or experiment, when one is open
}

// New builds the root model.
func New(opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.EtcdDelay == 0 {
		opts.EtcdDelay = 100 * time.Millisecond
	}
	prog := opts.Progress
	if prog == nil {
		prog = progress.New()
	}
	st := theme.DefaultStyles(true)
	m := Model{
		opts:   opts,
		course: opts.Course,
		prog:   prog,
		styles: st,
		keys:   theme.DefaultGlobalKeys(),
		help:   help.New(),
		now:    opts.Now,
		width:  80,
		height: 24,
		saver:  &saver{},
	}
	m.help.Styles = st.Help
	m.etcd = newEtcdState(opts)
	m.home = newHome(m.course, st)
	m.reader = newReader(st)
	m.reader.learner = opts.Learner
	m.quiz = newQuiz(st, opts.Learner)
	if opts.ProgressNotice != "" {
		m.home.notice = opts.ProgressNotice
	}
	m.resize(m.width, m.height)
	return m
}

// Init asks for the background colour and schedules etcd's start for just
// after the first frame.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.opts.Etcd != nil {
		cmds = append(cmds, tea.Tick(m.opts.EtcdDelay, func(time.Time) tea.Msg { return etcdStartMsg{} }))
	}
	if m.opts.Background != nil {
		cmds = append(cmds, tea.Tick(time.Second, func(time.Time) tea.Msg { return backgroundMsg{} }))
	}
	return tea.Batch(cmds...)
}

// Update routes a message: global keys and sizes first, then the active
// screen.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, tea.Batch(m.afterResize(), m.forwardToChild(msg))
	case tea.BackgroundColorMsg:
		m.setStyles(theme.DefaultStyles(msg.IsDark()))
		return m, tea.Batch(m.afterResize(), m.forwardToChild(msg))
	case tea.KeyPressMsg:
		if cmd, done := m.globalKey(msg); done {
			return m, cmd
		}
	case backgroundMsg:
		return m, m.opts.Background
	case etcdStartMsg:
		cmd := m.etcd.start(context.Background(), m.opts.Etcd)
		m.home.etcdInfo = m.etcd.detail()
		return m, cmd
	case etcdReadyMsg:
		m.etcd.ready(msg)
		m.home.etcdInfo, m.home.etcdFailed = m.etcd.detail(), m.etcd.phase == etcdFailed
		if m.child != nil {
			// An experiment opened while etcd was starting can run now.
			var cmd tea.Cmd
			m.child, cmd = m.child.Update(EtcdReadyMsg{Etcd: msg.srv, Err: msg.err})
			return m, cmd
		}
		return m, nil
	case progressSavedMsg:
		if msg.err != nil {
			m.setNotice("could not save progress: "+msg.err.Error(), true)
		}
		return m, nil
	case openLessonMsg:
		return m, m.openLesson(msg.lesson, msg.page)
	case openQuizMsg:
		return m, m.openQuiz(msg.lesson, msg.only)
	case openLabMsg:
		return m, m.openLab(msg.lab)
	case openExperimentMsg:
		return m, m.openExperiment(msg.name)
	case pageShownMsg:
		m.prog.MarkPageRead(msg.lesson, msg.page, m.now())
		m.home.refresh(m.prog)
		return m, m.save()
	case checkAnsweredMsg:
		m.prog.RecordCheck(msg.lesson, msg.question, msg.answer)
		return m, m.save()
	case quizFinishedMsg:
		m.prog.RecordQuiz(msg.lesson, msg.result)
		m.home.refresh(m.prog)
		return m, m.save()
	case LabPassedMsg:
		if l := m.course.Lab(msg.Lab); l != nil {
			m.prog.RecordLabPassed(l.Lesson, l.ID, m.now())
			m.home.refresh(m.prog)
			return m, m.save()
		}
		return m, nil
	case backMsg:
		return m, m.goBack()
	}
	return m, m.updateActive(msg)
}

// globalKey handles the keys every screen shares. done means the key was
// consumed.
func (m *Model) globalKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	m.notice = ""
	switch {
	case key.Matches(msg, m.keys.ForceQuit):
		return tea.Quit, true
	case m.showHelp:
		// Any key closes the help; esc and ? are the documented ones.
		m.showHelp = false
		return nil, true
	case key.Matches(msg, m.keys.Help) && !m.typing():
		m.showHelp = true
		return nil, true
	case key.Matches(msg, m.keys.Back):
		if m.child != nil && m.state >= stateLab && m.child.Capturing() {
			return nil, false
		}
		if m.state == stateReader && m.reader.checkOpen() {
			return nil, false // the reader closes its checkpoint first
		}
		if m.state == stateHome {
			return nil, true
		}
		return m.goBack(), true
	case key.Matches(msg, m.keys.Quit) && m.state == stateHome && !m.typing():
		return tea.Quit, true
	}
	return nil, false
}

// typing reports whether the active screen is taking free text, so ? and q
// are characters rather than commands.
func (m Model) typing() bool {
	switch m.state {
	case stateQuiz:
		return m.quiz.typing()
	case stateReader:
		return m.reader.typing()
	}
	return false
}

func (m *Model) updateActive(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch m.state {
	case stateHome:
		m.home, cmd = m.home.Update(msg)
	case stateReader:
		m.reader, cmd = m.reader.Update(msg)
	case stateQuiz:
		m.quiz, cmd = m.quiz.Update(msg)
	case stateLab, stateExperiment:
		if m.child != nil {
			m.child, cmd = m.child.Update(msg)
		}
	}
	if _, isKey := msg.(tea.KeyPressMsg); !isKey && m.state != stateReader {
		// Renderings finish in the background; the reader keeps its cache
		// warm even while another screen is on top.
		if r, ok := msg.(renderedMsg); ok {
			var rc tea.Cmd
			m.reader, rc = m.reader.Update(r)
			cmd = tea.Batch(cmd, rc)
		}
	}
	return cmd
}

func (m *Model) push(s state) {
	if m.state != s {
		m.back = append(m.back, m.state)
	}
	m.state = s
	m.showHelp = false
}

func (m *Model) goBack() tea.Cmd {
	if (m.state == stateLab || m.state == stateExperiment) && m.child != nil {
		m.child.Close()
		m.child = nil
	}
	if len(m.back) == 0 {
		m.state = stateHome
		return nil
	}
	m.state = m.back[len(m.back)-1]
	m.back = m.back[:len(m.back)-1]
	if m.state == stateHome {
		m.home.refresh(m.prog)
	}
	return nil
}

func (m *Model) openLesson(id string, page int) tea.Cmd {
	l := m.course.Lesson(id)
	if l == nil {
		m.setNotice("no lesson "+id, true)
		return nil
	}
	m.back = nil // a lesson is always one step from home
	m.push(stateReader)
	return m.reader.open(l, page, m.prog)
}

func (m *Model) openQuiz(lessonID string, only []string) tea.Cmd {
	l := m.course.Lesson(lessonID)
	if l == nil || l.Quiz == nil || len(l.QuizQuestions()) == 0 {
		m.setNotice("this lesson has no quiz", true)
		return nil
	}
	m.push(stateQuiz)
	return m.quiz.start(l, only)
}

func (m *Model) openLab(id string) tea.Cmd {
	lab := m.course.Lab(id)
	if lab == nil {
		lab = &lessons.Lab{ID: id, Title: id}
	}
	var scr Screen
	var cmd tea.Cmd
	if m.opts.Lab != nil {
		scr, cmd = m.opts.Lab(lab, m.prog.LabPassed(lab.Lesson, lab.ID), m.styles)
	} else {
		scr = newPlaceholder(m.styles, "Lab "+lab.ID, labHowTo(lab))
	}
	m.openChild(stateLab, scr)
	return cmd
}

func (m *Model) openExperiment(name string) tea.Cmd {
	var scr Screen
	var cmd tea.Cmd
	if m.opts.Experiment != nil {
		scr, cmd = m.opts.Experiment(name, m.etcd.srv, m.styles)
	} else {
		scr = newPlaceholder(m.styles, "Experiment "+name, experimentHowTo(name))
	}
	m.openChild(stateExperiment, scr)
	return cmd
}

func (m *Model) openChild(s state, scr Screen) {
	if m.child != nil {
		m.child.Close()
	}
	m.child = scr
	// A lab or experiment replaces another lab or experiment rather than
	// stacking on it.
	if m.state == stateLab || m.state == stateExperiment {
		m.state = s
	} else {
		m.push(s)
	}
	m.child.SetSize(m.childSize())
}

func (m *Model) setNotice(s string, isErr bool) {
	m.notice, m.noticeIsErr = s, isErr
}

// save writes a snapshot of the progress in the background.
func (m *Model) save() tea.Cmd {
	if m.opts.ProgressPath == "" {
		return nil
	}
	snap, path := m.prog.Clone(), m.opts.ProgressPath
	m.saver.taken++
	seq, sv, saved := m.saver.taken, m.saver, m.opts.ProgressSaved
	return func() tea.Msg {
		err := sv.write(seq, path, snap)
		if err == nil && saved != nil {
			saved(snap)
		}
		return progressSavedMsg{err: err}
	}
}

// saver orders the background saves: snapshots are numbered as they are
// taken, and one that reaches the disk after a newer one is dropped, so
// fast paging never leaves an older record on disk.
type saver struct {
	taken   uint64 // last snapshot number handed out (Update only)
	mu      sync.Mutex
	written uint64 // newest snapshot on disk
}

func (s *saver) write(seq uint64, path string, p *progress.Progress) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq < s.written {
		return nil
	}
	if err := progress.Save(path, p); err != nil {
		return err
	}
	s.written = seq
	return nil
}

func (m *Model) setStyles(st theme.Styles) {
	m.styles = st
	m.help.Styles = st.Help
	m.home.setStyles(st)
	m.reader.setStyles(st)
	m.quiz.setStyles(st)
	if m.child != nil {
		m.child.SetStyles(st)
	}
}

// Chrome: one title line on top, one status line and one help line below.
const chromeLines = 3

func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.help.SetWidth(max(w-2, 10))
	bw, bh := m.bodySize()
	m.home.setSize(bw, bh)
	m.reader.setSize(bw, bh)
	m.quiz.setSize(bw, bh)
	if m.child != nil {
		m.child.SetSize(m.childSize())
	}
}

// afterResize asks the reader for renderings at the new width.
func (m *Model) afterResize() tea.Cmd {
	return m.reader.ensureRendered()
}

// forwardToChild hands a size or colour change to a hosted screen (lab,
// experiment) after SetSize/SetStyles, so it can re-render what it caches
// (SetSize cannot return a command).
func (m *Model) forwardToChild(msg tea.Msg) tea.Cmd {
	if m.child == nil {
		return nil
	}
	var cmd tea.Cmd
	m.child, cmd = m.child.Update(msg)
	return cmd
}
