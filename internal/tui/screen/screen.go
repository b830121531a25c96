// Package screen is the contract between the TUI's root model and its
// screens (internal/tui/screen/home, reader, quiz, lab, experiment, ...):
// the Screen interface the root hosts every screen through, and the
// messages screens send to ask for another screen or to record progress.
// A new screen is a package with a Model that embeds Base, a constructor
// New(Context, Options) *Model, and an Open message the root turns into it.
//
// The package links no etcd: a screen that only shows text (home, reader,
// quiz, progress) builds without the etcd server or client.
package screen

import (
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// Screen is one screen on the root's stack. The root routes messages in a
// fixed order: global keys and sizes first, key presses to the screen on
// top, every other message to every screen on the stack (so a screen
// below keeps receiving the results of its own commands).
type Screen interface {
	// Init starts the screen's work (reading files, rendering) once the
	// root has sized and styled it.
	Init() tea.Cmd
	Update(tea.Msg) (Screen, tea.Cmd)
	// View draws the screen's body; the root adds the chrome.
	View() string
	// SetSize gives the body's size in cells. A screen whose Title is ""
	// draws its own title and gets the title line as well.
	SetSize(w, h int)
	SetStyles(theme.Styles)
	// ShortHelp and FullHelp list the screen's own keys; the root adds
	// the global ones (help, back, quit).
	help.KeyMap
	// Title is the top line of the chrome; "" when the screen draws its own.
	Title() string
	// Status is the left part of the status line, such as "page 2/5".
	Status() string
	// Capturing reports that esc belongs to the screen right now (to
	// cancel something or close a question), so the root must not go back.
	Capturing() bool
	// Typing reports that the screen takes free text, so ? and q are
	// characters rather than commands.
	Typing() bool
	// Close releases what the screen holds (watchers, running commands)
	// when it leaves the stack.
	Close()
}

// Send returns a command that delivers msg.
func Send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// Requests for another screen. Any screen may send them; the root opens
// the screen on top of the stack.
type (
	// OpenLesson opens the reader at a page; Page < 0 opens it where the
	// learner left off.
	OpenLesson struct {
		Lesson string
		Page   int
	}
	// OpenQuiz opens a lesson's quiz.
	OpenQuiz struct{ Lesson string }
	// OpenLab opens the lab runner for a lab id.
	OpenLab struct{ Lab string }
	// OpenExperiment opens the experiment screen for a scenario name.
	OpenExperiment struct{ Name string }
	// OpenReview opens a review of the missed questions due now, from
	// every lesson.
	OpenReview struct{}
	// Back closes the screen on top.
	Back struct{}
	// Home closes every screen over the course map: a finished quiz's
	// "back to the course" goes to the list of lessons, not to the lesson
	// it was opened from.
	Home struct{}
	// OpenProgress opens the progress view.
	OpenProgress struct{}
)

// LabRanUnderFaults says that the learner's code of a lab finished a run
// as replicas under faults, on a schedule, and whether every property
// held, for the learner's progress.
type LabRanUnderFaults struct {
	Lab, Schedule string
	Held          bool
}

// ResetProgress asks the root to forget one part of the learner's
// progress: a whole lesson, a lab or an experiment (exactly one is set).
// What says it in words for the notice that confirms it.
type ResetProgress struct {
	Lesson, Lab, Experiment string
	What                    string
}

// Progress events: the root records them in the learner's progress, saves
// it in the background, and sends every screen a ProgressChanged.
type (
	// PageShown says a lesson page was on screen.
	PageShown struct {
		Lesson string
		Page   int
	}
	// CheckAnswered says an inline checkpoint was answered.
	CheckAnswered struct {
		Lesson, Question string
		Answer           progress.Answer
	}
	// QuizFinished says a quiz round ended.
	QuizFinished struct {
		Lesson string
		Result progress.QuizResult
	}
	// Reviewed says a question was answered in a review session; the
	// root moves it through the review schedule.
	Reviewed struct {
		Question string
		Right    bool
	}
	// LabPassed says a grade passed every step of a lab, verified.
	LabPassed struct{ Lab string }
	// LabGraded says a grade of a lab ended without a verified pass:
	// Status says how (the lab screen's progressStatus), Step names the first
	// step that did not pass.
	LabGraded struct {
		Lab    string
		Status progress.LabStatus
		Step   string
	}
	// ExperimentRan says a run of an experiment finished; Shown that it
	// showed the effect it was built to show.
	ExperimentRan struct {
		Name  string
		Shown bool
	}
	// StepModeChosen says the learner switched an experiment's run
	// between step mode (Step) and auto-play; later runs keep the choice.
	StepModeChosen struct{ Step bool }
	// Predicted says how the learner's prediction of an experiment fared
	// in the run it was made for: Question is the prediction's review id,
	// Right whether the run bore the pick out, Outcome the options it bore
	// out (their texts), which a review asks for again.
	Predicted struct {
		Name     string
		Question string
		Right    bool
		Outcome  []string
	}
	// TempoChosen says the learner chose another auto-play tempo for
	// experiments (0: no pause); later screens start with it.
	TempoChosen struct{ Tempo time.Duration }
	// ProgressChanged carries the learner's progress after a change. The
	// root owns it; screens read it only inside Update and View.
	ProgressChanged struct{ Progress *progress.Progress }
)

// Etcd is the running etcd as the contract names it: where it listens.
// The value is always the root's embedetcd.Etcd (the server it started or
// the cluster it connected to); a screen that runs clients of its own
// (the experiment screen) asserts it back to embedetcd.Etcd. Naming the
// embedetcd type here would link etcd's server into every screen.
type Etcd interface {
	Endpoints() []string
}

// EtcdReady reaches every screen when the etcd start finishes: Etcd is the
// running server (or the external cluster), or Err why it failed.
type EtcdReady struct {
	Etcd Etcd
	Err  error
	// External says Etcd is a cluster the learner named rather than the
	// etcd the playground started.
	External bool
}

// CourseLoaded reaches every screen when the whole course (quizzes, labs)
// is loaded, replacing the outline the first frame was drawn from.
// Problems counts what `playground check` would report.
type CourseLoaded struct {
	Course   *lessons.Course
	Problems int
}

// EtcdStatus is the etcd state in words, for screens that show it (home).
type EtcdStatus struct {
	Detail string
	Failed bool
}

// Context is what every screen constructor may need from the root: every
// screen's New takes it first, then the screen's own Options.
type Context struct {
	// Course is the course as loaded so far (an outline until
	// CourseLoaded).
	Course   *lessons.Course
	Styles   theme.Styles
	Progress *progress.Progress
	// Learner is the learner's identity: it seeds the per-learner option
	// shuffle of questions.
	Learner string
}
