package tui

import (
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
)

// progressSavedMsg reports a change applied to the progress file: the
// file's whole content after it (what this program and any other recorded,
// minus what was reset), and how many changes had reached the file then.
type progressSavedMsg struct {
	err     error
	disk    *progress.Progress
	applied uint64
}

// record applies a change to the in-memory progress at once, for the
// screens, and to the file in the background with progress.Update, which
// re-reads the file under its lock and applies the same change there. Only
// the change is written, never a snapshot of this program's copy: a
// snapshot would bring back what another program reset (playground
// progress reset, another window) and would hide what another program
// recorded (playground grade in another terminal) until a restart.
func (m *Model) record(change func(*progress.Progress)) tea.Cmd {
	change(m.prog)
	if m.opts.ProgressPath == "" {
		return nil
	}
	path, sv, saved := m.opts.ProgressPath, m.saver, m.opts.ProgressSaved
	m.saver.issued++
	return func() tea.Msg {
		p, applied, err := sv.apply(path, change)
		if err == nil && saved != nil {
			saved(p.Clone())
		}
		return progressSavedMsg{err: err, disk: p, applied: applied}
	}
}

// adopt takes the file's content as the program's progress once every
// change handed out has reached the file, so that what other programs
// recorded shows up; it reports whether it did.
func (m *Model) adopt(msg progressSavedMsg) bool {
	if msg.err != nil || msg.disk == nil || msg.applied != m.saver.issued {
		return false // a newer change is on its way and will bring the file's state
	}
	m.prog = msg.disk
	return true
}

// saver serialises the background changes to the progress file and counts
// them, so the root knows which result is the latest.
type saver struct {
	issued uint64 // changes handed out (Update goroutine only)

	mu      sync.Mutex
	applied uint64 // changes that reached the file, or failed to
}

func (s *saver) apply(path string, change func(*progress.Progress)) (*progress.Progress, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied++
	p, err := progress.Update(path, change)
	return p, s.applied, err
}
