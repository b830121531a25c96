package tui

import (
	"github.com/ownership-election/playground/internal/progress"
)

// Navigation requests travel as messages so that any screen can ask for
// another without knowing the root.
type (
	openLessonMsg struct {
		lesson string
		page   int // -1: where the learner left off
	}
	openQuizMsg struct {
		lesson string
		only   []string // question ids to ask; nil asks them all
	}
	openLabMsg        struct{ lab string }
	openExperimentMsg struct{ name string }
	backMsg           struct{}
	backgroundMsg     struct{} // time to start Options.Background
)

// Progress events, recorded by the root and saved in the background.
type (
	pageShownMsg struct {
		lesson string
		page   int
	}
	checkAnsweredMsg struct {
		lesson, question string
		answer           progress.Answer
	}
	quizFinishedMsg struct {
		lesson string
		result progress.QuizResult
	}
	labPassedMsg     struct{ lab string }
	progressSavedMsg struct{ err error }
)

// LabPassedMsg tells the root that a lab passed every step; the lab screen
// sends it and the root records it in the learner's progress.
type LabPassedMsg struct{ Lab string }
