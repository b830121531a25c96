package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// classStatusMsg carries what keeps the learner's progress from the class
// board (a refused login, a full cluster), or "" once it is gone.
type classStatusMsg struct{ problem string }

// waitClassStatus waits for the next class status; nil when the
// playground is not in a class.
func waitClassStatus(ch <-chan string) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		problem, ok := <-ch
		if !ok {
			return nil
		}
		return classStatusMsg{problem: problem}
	}
}

// shortProblem is a class problem in its first words ("class: login
// refused"), for a status line shared with watch mode: the messages read
// "class: WHAT: what to do".
func shortProblem(problem string) string {
	head, rest, ok := strings.Cut(problem, ": ")
	if !ok {
		return problem
	}
	what, _, _ := strings.Cut(rest, ": ")
	return head + ": " + what
}
