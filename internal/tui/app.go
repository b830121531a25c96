// Package tui is the playground's terminal interface: the root model. It
// hosts the screens (internal/tui/screen/...) on a stack through one
// interface, routes messages to them, opens the screen a message asks for,
// keeps the learner's progress and saves it, and owns etcd's start.
package tui

import (
	"context"
	"slices"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/experiment"
	"github.com/ownership-election/playground/internal/tui/screen/home"
	"github.com/ownership-election/playground/internal/tui/screen/lab"
	"github.com/ownership-election/playground/internal/tui/screen/progressview"
	"github.com/ownership-election/playground/internal/tui/screen/quiz"
	"github.com/ownership-election/playground/internal/tui/screen/reader"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// Options configure the TUI. Course is required; everything else has a
// usable zero value.
type Options struct {
	// Course is the course, or its outline (lessons.Outline) when Load is
	// set: the first frame is drawn from it.
	Course *lessons.Course
	// Load, when set, loads the whole course (quizzes, labs, checks) in
	// the background after the first frame; it replaces Course when done,
	// and screens asked for meanwhile open then.
	Load func() (*lessons.Course, []lessons.Problem)
	// Progress is the learner's saved progress (progress.Load) and
	// ProgressNotice what went wrong reading it, shown on the home screen.
	Progress       *progress.Progress
	ProgressNotice string
	// ProgressPath is where progress is saved; empty disables saving.
	ProgressPath string
	// ProgressSaved, if set, is called (off the UI goroutine) with each
	// snapshot once it is on disk: the class board's publisher.
	ProgressSaved func(*progress.Progress)
	// ClassStatus delivers what keeps the learner's progress from the
	// class board, in words for the status line ("" once it is gone);
	// nil outside a class.
	ClassStatus <-chan string
	// Learner is the learner's identity; it seeds the per-learner option
	// shuffle of questions.
	Learner string
	// Context ends the background work the TUI starts (etcd's start
	// among it); nil means context.Background(). Quitting cancels it too.
	Context context.Context
	// Etcd starts or connects to etcd in the background after the first
	// frame; nil leaves the status as "not started".
	Etcd EtcdStarter
	// EtcdExternal says Etcd connects to an existing cluster rather than
	// starting the embedded one; EtcdShared names that cluster's endpoints
	// for the screens that say where they run.
	EtcdExternal bool
	EtcdShared   string
	// EtcdLogPath is where etcd writes its log, shown when it fails.
	EtcdLogPath string
	// Lab configures the lab runner screens (the checkout, the catalogue,
	// the graders' environment); Lab, Passed and Last are set per lab.
	Lab lab.Options
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// EtcdDelay is how long after start etcd waits before starting, so the
	// first frame is drawn first; zero means 100ms.
	EtcdDelay time.Duration
	// Background is work to start once the learner has the screen, such as
	// compiling the labs' tests ahead of the first grade; it runs a second
	// after start. Its messages go to every screen.
	Background tea.Cmd
}

// EtcdStarter starts the embedded etcd, or connects to an external one.
// It runs in the background; it must honour ctx.
type EtcdStarter func(ctx context.Context) (embedetcd.Etcd, error)

// backgroundMsg says it is time to start Options.Background.
type backgroundMsg struct{}

// courseLoadedMsg carries the whole course from Options.Load.
type courseLoadedMsg struct {
	course *lessons.Course
	probs  []lessons.Problem
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
	ctx    context.Context
	cancel context.CancelFunc

	loading bool      // Options.Load has not delivered the course yet
	pending []tea.Msg // screens asked for while loading, opened once loaded

	width, height int
	stack         []screen.Screen // home at the bottom, the active screen on top
	showHelp      bool
	notice        string // one line shown at the bottom until the next key
	noticeIsErr   bool

	etcd etcdState
	// classProblem keeps the learner's progress from the class board
	// (Options.ClassStatus); the status line shows it in place of etcd's.
	classProblem string
	saver        *saver
	// watch is watch mode, which outlives the lab screen: every lab
	// screen shares it, the status line shows it (watch.go).
	watch *lab.Watch
}

// New builds the root model with the home screen on its stack.
func New(opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.EtcdDelay == 0 {
		opts.EtcdDelay = 100 * time.Millisecond
	}
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	prog := opts.Progress
	if prog == nil {
		prog = progress.New()
	}
	ctx, cancel := context.WithCancel(opts.Context)
	m := Model{
		opts:   opts,
		course: opts.Course,
		prog:   prog,
		styles: theme.DefaultStyles(true),
		keys:   theme.DefaultGlobalKeys(),
		help:   help.New(),
		now:    opts.Now,
		ctx:    ctx,
		cancel: cancel,
		width:  80,
		height: 24,
		saver:  &saver{},
	}
	m.help.Styles = m.styles.Help
	if m.opts.Lab.Now == nil {
		m.opts.Lab.Now = opts.Now // lab screens and watch mode tell the same time
	}
	m.watch = lab.NewWatch(m.opts.Lab)
	m.loading = opts.Load != nil
	m.etcd = newEtcdState(opts)
	m.stack = []screen.Screen{home.New(m.screenContext(), home.Options{Notice: opts.ProgressNotice, Now: opts.Now})}
	m.resize(m.width, m.height)
	return m
}

func (m Model) screenContext() screen.Context {
	return screen.Context{Course: m.course, Styles: m.styles, Progress: m.prog, Learner: m.opts.Learner}
}

// Init asks for the background colour and schedules etcd's start for just
// after the first frame.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if load := m.opts.Load; load != nil {
		cmds = append(cmds, func() tea.Msg {
			c, probs := load()
			return courseLoadedMsg{course: c, probs: probs}
		})
	}
	if m.opts.Etcd != nil {
		cmds = append(cmds, tea.Tick(m.opts.EtcdDelay, func(time.Time) tea.Msg { return etcdStartMsg{} }))
	}
	if m.opts.Background != nil {
		cmds = append(cmds, tea.Tick(time.Second, func(time.Time) tea.Msg { return backgroundMsg{} }))
	}
	cmds = append(cmds, watchProgressCmd(m.ctx, m.opts.ProgressPath), waitClassStatus(m.opts.ClassStatus))
	return tea.Batch(cmds...)
}

// top is the active screen.
func (m Model) top() screen.Screen { return m.stack[len(m.stack)-1] }

// atHome reports whether the home screen is the active one.
func (m Model) atHome() bool { return len(m.stack) == 1 }

// Update routes a message in a fixed order: input and sizes (global keys
// first), then the root's own background work, then requests for
// another screen, then progress events; anything else goes to every
// screen.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	for _, route := range []func(tea.Msg) (tea.Cmd, bool){m.input, m.background, m.navigate, m.progressEvent} {
		if cmd, ok := route(msg); ok {
			return m, cmd
		}
	}
	return m, m.broadcast(msg)
}

// labLesson is the id of the lesson lab belongs to: its manifest's, else
// the lesson that lists it; "" for a lab the course does not know.
func (m *Model) labLesson(lab string) string {
	if l := m.course.Lab(lab); l != nil && l.Lesson != "" {
		return l.Lesson
	}
	for _, l := range m.course.Lessons {
		if slices.Contains(l.Labs, lab) {
			return l.ID
		}
	}
	return ""
}

// globalKey handles the keys every screen shares. done means the key was
// consumed.
func (m *Model) globalKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	m.notice = ""
	top := m.top()
	switch {
	case key.Matches(msg, m.keys.ForceQuit):
		return m.quit(), true
	case m.showHelp:
		// Any key closes the help; esc and ? are the documented ones.
		m.showHelp = false
		return nil, true
	case key.Matches(msg, m.keys.Help) && !top.Typing():
		m.showHelp = true
		return nil, true
	case key.Matches(msg, m.keys.Back):
		if top.Capturing() {
			return nil, false
		}
		m.goBack()
		return nil, true
	case key.Matches(msg, m.keys.Quit) && m.atHome():
		return m.quit(), true
	case key.Matches(msg, m.keys.Progress) && !top.Typing() && !top.Capturing():
		return m.openProgress(), true
	case key.Matches(msg, m.keys.NextLab) && !top.Typing() && !top.Capturing() && m.offer() != "":
		return m.openNextLab(), true
	}
	return nil, false
}

// openProgress puts the progress view on top, unless it is there already.
func (m *Model) openProgress() tea.Cmd {
	if _, ok := m.top().(*progressview.Model); ok {
		return nil
	}
	return m.push(progressview.New(m.screenContext(), progressview.Options{File: m.opts.ProgressPath}))
}

// resetProgress forgets what r names, in memory and on disk, and tells
// the screens.
func (m *Model) resetProgress(r screen.ResetProgress) tea.Cmd {
	now := m.now()
	var change func(*progress.Progress)
	switch {
	case r.Lesson != "":
		ids := lessonQuestionIDs(m.course, r.Lesson)
		change = func(p *progress.Progress) { p.ResetLesson(r.Lesson, now); p.ForgetReview(ids, now) }
	case r.Lab != "":
		change = func(p *progress.Progress) { p.ResetLab(r.Lab, now) }
	case r.Experiment != "":
		change = func(p *progress.Progress) { p.ResetExperiment(r.Experiment, now) }
	default:
		return nil
	}
	cmd := m.record(change)
	m.setNotice("Forgot "+r.What+".", false)
	return tea.Batch(cmd, m.broadcast(screen.ProgressChanged{Progress: m.prog}))
}

// quit ends the program, and with it whatever the TUI started in the
// background (an etcd start in flight stops at once).
func (m *Model) quit() tea.Cmd {
	for _, s := range m.stack {
		s.Close()
	}
	m.watch.Close()
	m.cancel()
	return tea.Quit
}

// updateTop gives an input message to the active screen only.
func (m *Model) updateTop(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	m.stack[len(m.stack)-1], cmd = m.top().Update(msg)
	return cmd
}

// broadcast gives a message to watch mode, then to every screen on the
// stack, so a screen below the top still gets its own commands' results
// and the news, and a lab screen sees the watch's grade once it is in.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.stack)+1)
	cmds = append(cmds, m.watch.Update(msg))
	for i, s := range m.stack {
		var cmd tea.Cmd
		m.stack[i], cmd = s.Update(msg)
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// push puts a new screen on top, sized and styled, and starts it.
func (m *Model) push(s screen.Screen) tea.Cmd {
	s.SetStyles(m.styles)
	s.SetSize(m.screenSize(s))
	m.stack = append(m.stack, s)
	m.showHelp = false
	return s.Init()
}

// goBack closes the screen on top; home stays.
func (m *Model) goBack() {
	if m.atHome() {
		return
	}
	m.top().Close()
	m.stack = m.stack[:len(m.stack)-1]
}

// replaceTop closes screens until the stack holds keep, for screens that
// replace another rather than stack on it.
func (m *Model) truncate(keep int) {
	for len(m.stack) > keep {
		m.goBack()
	}
}

// open opens the screen an Open message asks for.
func (m *Model) open(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case screen.OpenLesson:
		return m.openLesson(msg.Lesson, msg.Page)
	case screen.OpenQuiz:
		return m.openQuiz(msg.Lesson)
	case screen.OpenLab:
		return m.openLab(msg.Lab)
	case screen.OpenExperiment:
		return m.openExperiment(msg.Name)
	case screen.OpenReview:
		return m.openReview()
	}
	return nil
}

func (m *Model) openLesson(id string, page int) tea.Cmd {
	l := m.course.Lesson(id)
	if l == nil {
		m.setNotice("no lesson "+id, true)
		return nil
	}
	m.truncate(1) // a lesson is always one step from home
	return m.push(reader.New(m.screenContext(), reader.Options{Lesson: l, Page: page, Next: m.lessonAfter(l)}))
}

func (m *Model) openQuiz(lessonID string) tea.Cmd {
	l := m.course.Lesson(lessonID)
	if l == nil || len(l.QuizQuestions()) == 0 {
		m.setNotice("this lesson has no quiz", true)
		return nil
	}
	return m.push(quiz.New(m.screenContext(), quiz.Options{Lesson: l}))
}

// practice reports whether the top is a lab or an experiment: another one
// replaces it rather than stacking on it.
func (m *Model) replacePractice() {
	switch m.top().(type) {
	case *lab.Model, *experiment.Model:
		m.goBack()
	}
}

func (m *Model) openLab(id string) tea.Cmd {
	l := m.course.Lab(id)
	if l == nil {
		l = &lessons.Lab{ID: id, Title: id, Lesson: m.labLesson(id)}
	}
	opts := m.opts.Lab
	opts.Lab = *l
	opts.Lesson = m.course.Lesson(l.Lesson)
	opts.Watch = m.watch
	opts.Passed = m.prog.LabPassed(l.Lesson, l.ID)
	if g, ok := m.prog.Labs[l.ID]; ok {
		opts.Last = &g
	}
	m.replacePractice()
	s := lab.New(m.screenContext(), opts)
	if m.etcd.phase == etcdReady {
		s.Update(screen.EtcdReady{Etcd: m.etcd.srv, External: m.etcd.external})
	}
	return m.push(s)
}

func (m *Model) openExperiment(name string) tea.Cmd {
	m.replacePractice()
	// The screen asks the scenario's own prediction (not the course's
	// predict question, which a page already asked) and starts at the
	// tempo the learner last chose.
	opts := experiment.Options{Name: name}
	opts.Tempo, opts.TempoSet = m.prog.Tempo()
	// A first run goes step by step, so the learner can read each step
	// before the next; after that the learner's last choice holds.
	opts.Step = m.prog.Experiments[name].Runs == 0 || m.prog.ExperimentMode == progress.ExperimentModeStep
	switch {
	case m.etcd.phase == etcdReady:
		opts.Etcd = m.etcd.srv
	case m.etcd.external && m.etcd.phase == etcdFailed:
		opts.Shared, opts.SharedErr = m.opts.EtcdShared, m.etcd.err
	case m.etcd.external:
		opts.Shared = m.opts.EtcdShared
	}
	return m.push(experiment.New(m.screenContext(), opts))
}

func (m *Model) setNotice(s string, isErr bool) {
	m.notice, m.noticeIsErr = s, isErr
}

// progressChanged records a change of the progress (see record) and tells
// the screens.
func (m *Model) progressChanged(change func(*progress.Progress)) tea.Cmd {
	return tea.Batch(m.record(change), m.broadcast(screen.ProgressChanged{Progress: m.prog}))
}

func (m *Model) setStyles(st theme.Styles) {
	m.styles = st
	m.help.Styles = st.Help
	for _, s := range m.stack {
		s.SetStyles(st)
	}
}

// Chrome: one title line on top, one status line and one help line below.
const chromeLines = 3

func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.help.SetWidth(max(w-2, 10))
	for _, s := range m.stack {
		s.SetSize(m.screenSize(s))
	}
}

// bodySize is the area under the title line.
func (m Model) bodySize() (int, int) {
	w := m.width - 2 // App padding
	h := m.height - chromeLines
	return max(w, 10), max(h, 1)
}

// screenSize is the area a screen draws in: a screen that draws its own
// title gets the title line too.
func (m Model) screenSize(s screen.Screen) (int, int) {
	w, h := m.bodySize()
	if s.Title() == "" {
		h++
	}
	return w, h
}
