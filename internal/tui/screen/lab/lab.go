// Package lab is the lab runner screen of the playground TUI: it shows a
// lab's README and steps, grades the learner's code with internal/grade,
// reveals hints one at a time, opens the stub in the learner's editor, and
// resets the stub or shows the reference solution after asking. Watch,
// which the root owns, is watch mode: it re-grades the watched lab on
// every save, whichever screen is open.
package lab

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ownership-election/playground/internal/progress"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/lab/faults"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/labs"
	"github.com/ownership-election/playground/lessons"
)

// RepoURL is where the labs live when the program runs outside a checkout.
const RepoURL = "https://github.com/ownership-election/playground"

// Options configure a lab runner.
type Options struct {
	// Lab is the lab the screen runs (New); watch mode takes its lab with
	// Start instead.
	Lab lessons.Lab
	// Root is the module root of the learner's checkout (the folder with
	// go.mod and labs/). When labs/<id> is missing there, the screen
	// explains how to get the labs instead of grading.
	Root string
	// Catalog is the embedded copy of the labs: READMEs for installed
	// binaries, and the original stub that reset restores. Nil means
	// labs.Catalog().
	Catalog fs.FS
	// Lesson is the lesson the lab belongs to, named by number and title
	// in the header; nil shows the manifest's lesson id.
	Lesson *lessons.Lesson
	// Passed says the learner already passed this lab (from progress), so
	// the solution opens without a question.
	Passed bool
	// Last is how the latest grade of this lab ended (from progress), shown
	// until the screen grades again; nil when it was never graded.
	Last *progress.LabGrade
	// Timeout bounds one grading run; zero means internal/grade's default.
	Timeout time.Duration
	// Debounce is the quiet time after a burst of saves before watch mode
	// re-grades; zero means 300ms.
	Debounce time.Duration
	// Watch is the program's watch mode, owned by the root, which keeps
	// watching a lab after its screen closes. Nil gives the screen a watch
	// of its own that ends with the screen (Close).
	Watch *Watch
	// Env is added to the environment of go test, for example
	// PLAYGROUND_ETCD_ENDPOINTS=... when the learner chose an existing
	// etcd cluster with a flag rather than the variable.
	Env []string
	// Editor is the command that opens the stub; empty means $VISUAL, then
	// $EDITOR, then vi.
	Editor string
	// Now is the clock for elapsed times; nil means time.Now.
	Now func() time.Time
	// Course is what labs are built from besides the checkout's stub
	// file; nil means the course this binary embeds (grade.Builtin).
	Course *grade.Course
	// Program is the playground binary that x runs the lab's code under
	// faults with (experiment run --lab, a child process); empty means
	// this program (os.Executable).
	Program string
}

type pane int

const (
	paneReadme pane = iota
	paneResults
	paneSolution
)

type confirmKind int

const (
	confirmNone confirmKind = iota
	confirmSolution
	confirmReset
)

// Model is the lab runner screen. Create it with New; it is a child model:
// the root forwards messages to Update, sizes to SetSize, and draws View.
type Model struct {
	screen.Base
	lab  lessons.Lab
	opts Options
	keys KeyMap
	now  func() time.Time

	opened      bool // Init's openedMsg arrived
	labsPresent bool
	labDir      string // Root/labs/<id>

	pane       pane
	readmeVP   viewport.Model
	resultsVP  viewport.Model
	solutionVP viewport.Model

	readmeSrc      string
	readmeRendered map[int]string // glamour output per width
	readmeWant     int            // width whose rendering is in flight

	spinner  spinner.Model
	spinning bool // a spinner tick chain is alive
	verify   verifyUI

	// gradeRun is the screen's own grading; while watch mode watches
	// this lab, its grading, report and times mirror the watch's.
	gradeRun
	hintsOpen map[string]int // hints unlocked per step test
	passed    bool
	last      *progress.LabGrade // the saved latest grade, until this screen grades

	// watch is watch mode. While it watches this lab, the screen shows
	// its grades (watching, and grading, report, gradedAt mirror it) and
	// grades through it; ownWatch says the screen made it and closes it.
	watch    *Watch
	ownWatch bool
	watching bool

	steps stepsUI    // the results pane's step cursor and open step
	sol   solutionUI // the solution pane's diff

	confirm  confirmKind
	solution string // loaded reference solution, "" until shown

	etcdEnv []string // the graders' etcd variable, once the TUI's etcd runs

	notice    string // one line of news: "stub reset, your code is in ..."
	noticeErr bool

	faults faults.Model // x: the learner's code under faults
}

// New builds the runner for opts.Lab.
func New(ctx screen.Context, opts Options) *Model {
	lab, st := opts.Lab, ctx.Styles
	if opts.Catalog == nil {
		opts.Catalog = labs.Catalog()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	m := Model{
		Base:           screen.NewBase(ctx),
		lab:            lab,
		opts:           opts,
		keys:           DefaultKeyMap(),
		now:            now,
		readmeVP:       viewport.New(),
		resultsVP:      viewport.New(),
		solutionVP:     viewport.New(),
		readmeRendered: map[int]string{},
		hintsOpen:      map[string]int{},
		passed:         opts.Passed,
		last:           opts.Last,
		spinner: spinner.New(
			spinner.WithSpinner(spinner.MiniDot),
			spinner.WithStyle(st.Accent),
		),
	}
	m.labDir = labDir(opts.Root, lab.ID)
	m.faults = faults.New(faults.Options{Lab: lab.ID, Root: opts.Root, Env: opts.Env, Program: opts.Program, Now: now}, st)
	m.watch, m.ownWatch = opts.Watch, opts.Watch == nil
	if m.ownWatch {
		m.watch = NewWatch(opts)
	}
	m.syncWatch() // the watched lab shows its latest grade at once
	m.layout()
	return &m
}

var _ screen.Screen = (*Model)(nil)

// Update handles a message; see update.
func (m *Model) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	next, cmd := m.update(msg)
	*m = next
	return m, cmd
}

// Lab returns the lab this screen runs.
func (m Model) Lab() lessons.Lab { return m.lab }

// Init looks for the lab in the learner's checkout and reads its README,
// off the UI goroutine; the README is rendered once it is read.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.openCmd(), m.spin()) // spin: a watch grade may run
}

// SetStyles replaces the styles, for example once the terminal's background
// colour is known.
func (m *Model) SetStyles(st theme.Styles) {
	m.Base.SetStyles(st)
	m.spinner.Style = st.Accent
	m.faults.SetStyles(st)
	m.readmeRendered = map[int]string{}
	m.readmeWant = 0
	m.layout()
}

// SetSize gives the screen its drawing area. The README is re-rendered for
// the new width on the next Update (or by calling Init again).
func (m *Model) SetSize(w, h int) {
	if w < 20 {
		w = 20
	}
	if h < 6 {
		h = 6
	}
	m.Base.SetSize(w, h)
	m.layout()
}

// Capturing reports whether the screen needs esc for itself (to cancel a
// grade, answer a question or close a step's output), so the root must
// not treat it as "back". A watch grade goes on in the background, so esc
// leaves then (x cancels).
func (m Model) Capturing() bool {
	return m.grading && !m.watching || m.confirm != confirmNone || m.stepOpen() || m.reportOpen() || m.faults.IsOpen()
}

// Close stops a running grade, and watch mode when the screen has its
// own; call it when leaving the screen for good. The root's watch mode
// goes on.
func (m *Model) Close() {
	m.faults.Stop()
	m.release()
	if m.ownWatch {
		m.watch.Close()
	}
	m.grading, m.watching = false, false
}

// openedMsg says what Init found: whether the lab folder is in the
// checkout, and the README to show.
type openedMsg struct {
	lab     string
	present bool
	readme  string
}

func (m Model) openCmd() tea.Cmd {
	dir, lab, catalog := m.labDir, m.lab, m.opts.Catalog
	return func() tea.Msg {
		present := false
		if dir != "" {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				present = true
			}
		}
		return openedMsg{lab: lab.ID, present: present, readme: readReadme(present, dir, lab, catalog)}
	}
}

// readReadme finds the lab's README: the checkout's copy (the learner may
// have notes in it), else the manifest's, else the embedded catalogue's.
func readReadme(present bool, dir string, lab lessons.Lab, catalog fs.FS) string {
	if present {
		if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err == nil {
			return string(b)
		}
	}
	if lab.README != "" {
		return lab.README
	}
	if catalog != nil {
		if b, err := fs.ReadFile(catalog, lab.ID+"/README.md"); err == nil {
			return string(b)
		}
	}
	return "# " + lab.Title + "\n\n(This lab has no README.)\n"
}

func (m Model) stubPath() string { return filepath.Join(m.labDir, m.lab.File) }

func (m Model) solutionPath() string {
	return filepath.Join(m.opts.Root, "solutions", m.lab.ID, m.lab.File)
}

// FaultHistory returns the recorded history of the run the faults view
// shows, once that run has ended with one; false before.
func (m Model) FaultHistory() (history.History, bool) { return m.faults.History() }
