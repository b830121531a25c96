package labrun

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
)

// TEMPORARY until internal/grade lands.
func (m Model) gradeCmd(ctx context.Context, seq int) tea.Cmd {
	return func() tea.Msg { return gradeDoneMsg{seq: seq, report: report{Err: errors.New("grading not wired")}} }
}

func (m *Model) toggleWatch() tea.Cmd { return nil }

func (m Model) waitWatchCmd(ch <-chan struct{}) tea.Cmd { return nil }
