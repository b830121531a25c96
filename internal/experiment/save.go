package experiment

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/statedir"
)

// keepHistories is how many saved histories a directory keeps; older
// ones are removed as new ones come.
const keepHistories = 100

// HistoryDir is where the TUI keeps every run's history: "experiments"
// in the playground's state directory ("" if there is none).
func HistoryDir() string {
	dir, err := statedir.Dir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "experiments")
}

// saveHistory writes h into dir as SCENARIO-TIME.json, through a
// temporary file, and prunes the directory to keepHistories files.
func saveHistory(dir string, h history.History) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save the history: %w", err)
	}
	name := fmt.Sprintf("%s-%s.json", h.Scenario, h.Started.Format("20060102-150405.000"))
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".history-*")
	if err != nil {
		return "", fmt.Errorf("save the history: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := history.Write(tmp, h); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("save the history: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("save the history: %w", err)
	}
	prune(dir)
	return path, nil
}

// prune removes the oldest histories beyond keepHistories (their names
// sort by time within a scenario; the modification time orders them all).
func prune(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		mod  int64
	}
	var files []file
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".json") {
			files = append(files, file{filepath.Join(dir, e.Name()), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod > files[j].mod })
	for _, f := range files[min(len(files), keepHistories):] {
		os.Remove(f.path)
	}
}

// HistoryFile is where the run's history was saved (Env.HistoryDir),
// once it is over, or why it could not be.
func (run *Run) HistoryFile() (string, error) {
	<-run.done
	return run.savedTo, run.saveErr
}

// ReadHistory reads a history file (history.Read) of a scenario that
// lookup knows: the catalog of scenarios, of lab runs, or both.
func ReadHistory(r io.Reader, lookup func(name string) *Scenario) (history.History, error) {
	h, err := history.Read(r)
	if err != nil {
		return history.History{}, err
	}
	if lookup(h.Scenario) == nil {
		return history.History{}, fmt.Errorf("read history: %w: %q", ErrUnknown, h.Scenario)
	}
	return h, nil
}
