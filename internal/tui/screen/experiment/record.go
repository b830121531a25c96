package experiment

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/atomicfile"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/statedir"
)

// Every finished run's history is kept in the state directory, with the
// learner's prediction beside it, so that `playground experiment replay
// FILE` can show it again without etcd.

// keepHistories is how many histories of one scenario the directory
// keeps; older ones go.
const keepHistories = 10

// savedMsg says where a run's history went, or why it did not.
type savedMsg struct {
	run  *experiment.Run
	path string
	err  error
}

// saveHistory writes the finished run's history.
func (m Model) saveHistory() tea.Cmd {
	run := m.run
	h := run.History()
	if q := m.opts.Predict; q != nil && m.picked >= 0 && m.picked < len(q.Options) {
		o := q.Options[m.picked]
		h.Prediction = &experiment.Prediction{Question: q.ID, Picked: o.Text, Correct: o.Correct}
	}
	return func() tea.Msg {
		path, err := writeHistory(h)
		return savedMsg{run: run, path: path, err: err}
	}
}

// writeHistory writes h to STATE/experiments/SCENARIO-TIME.json and
// prunes the scenario's oldest.
func writeHistory(h experiment.History) (string, error) {
	dir, err := statedir.Dir()
	if err != nil {
		return "", fmt.Errorf("save history: %w", err)
	}
	dir = filepath.Join(dir, "experiments")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save history: %w", err)
	}
	var b bytes.Buffer
	if err := experiment.WriteHistory(&b, h); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.json", h.Scenario, h.Started.UTC().Format("20060102-150405.000")))
	if err := atomicfile.Write(path, b.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("save history: %w", err)
	}
	prune(dir, h.Scenario+"-")
	return path, nil
}

// prune removes all but the newest keepHistories files of dir starting
// with prefix (their names sort by time).
func prune(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names[:max(0, len(names)-keepHistories)] {
		os.Remove(filepath.Join(dir, n))
	}
}
