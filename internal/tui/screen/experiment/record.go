package experiment

import (
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/experiment"
)

// Every finished run's history is kept in the state directory, with the
// learner's prediction judged beside it (the engine saves it: Env.HistoryDir
// and Env.Prediction), so that `playground experiment replay FILE` can show
// it again without etcd.

// savedMsg says where a run's history went, or why it did not.
type savedMsg struct {
	run  *experiment.Run
	path string
	err  error
}

// saveHistory asks the finished run where its history went.
func (m Model) saveHistory() tea.Cmd {
	run := m.run
	return func() tea.Msg {
		path, err := run.HistoryFile()
		if err == nil && path == "" {
			err = errors.New("no state directory to keep it in")
		}
		return savedMsg{run: run, path: path, err: err}
	}
}
