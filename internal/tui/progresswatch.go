package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/fswatch"
	"github.com/ownership-election/playground/internal/progress"
)

// The TUI follows the progress file: when another program changes it (a
// `playground grade` in a second terminal, `playground progress reset`, a
// second window), the course map and the other screens show it without a
// restart. Its own writes come back through the same watch and change
// nothing.

// progressWatchDebounce is the quiet time after a write of the progress
// file before it is read again.
const progressWatchDebounce = 150 * time.Millisecond

type (
	// progressWatchMsg carries the watch's signal channel, or nil when the
	// file cannot be watched (the TUI then works as before, without it).
	progressWatchMsg struct{ sig <-chan struct{} }
	// progressFileChangedMsg says the file changed; the watch goes on.
	progressFileChangedMsg struct{ sig <-chan struct{} }
	// progressReloadedMsg is the file read again, with the number of the
	// program's own changes that had reached it then.
	progressReloadedMsg struct {
		disk    *progress.Progress
		applied uint64
	}
)

// watchProgressCmd starts watching the progress file's folder until ctx
// ends (the program quits).
func watchProgressCmd(ctx context.Context, path string) tea.Cmd {
	if path == "" {
		return nil
	}
	return func() tea.Msg {
		dir, name := filepath.Dir(path), filepath.Base(path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return progressWatchMsg{}
		}
		sig, err := fswatch.Dir(ctx, dir, progressWatchDebounce, func(base string) bool { return base == name })
		if err != nil {
			return progressWatchMsg{}
		}
		return progressWatchMsg{sig: sig}
	}
}

// waitProgressFile waits for the next change of the file.
func waitProgressFile(sig <-chan struct{}) tea.Cmd {
	if sig == nil {
		return nil
	}
	return func() tea.Msg {
		if _, ok := <-sig; !ok {
			return nil // the program is quitting
		}
		return progressFileChangedMsg{sig: sig}
	}
}

// reloadProgressCmd reads the file again, in order with the program's own
// writes.
func (m *Model) reloadProgressCmd() tea.Cmd {
	path, sv := m.opts.ProgressPath, m.saver
	return func() tea.Msg {
		p, applied := sv.reload(path)
		return progressReloadedMsg{disk: p, applied: applied}
	}
}

func (s *saver) reload(path string) (*progress.Progress, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _ := progress.Load(path, time.Now())
	return p, s.applied
}

// followFile adopts a reload when it brings something new and none of the
// program's own changes is still on its way (that change's write will bring
// the file's state); it reports whether the progress changed.
func (m *Model) followFile(msg progressReloadedMsg) bool {
	if msg.disk == nil || msg.applied != m.saver.issued || sameProgress(m.prog, msg.disk) {
		return false
	}
	m.prog = msg.disk
	return true
}

// sameProgress compares two records as they would be saved.
func sameProgress(a, b *progress.Progress) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
