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
	sv.add(change)
	return func() tea.Msg {
		p, applied, err := sv.apply(path)
		if err == nil && p != nil && saved != nil {
			saved(p.Clone())
		}
		return progressSavedMsg{err: err, disk: p, applied: applied}
	}
}

// adopt takes the file's content as the program's progress once every
// change handed out has reached the file, so that what other programs
// recorded shows up; it reports whether the progress changed (the file
// usually holds just what this program already has).
func (m *Model) adopt(msg progressSavedMsg) bool {
	if msg.err != nil {
		return false
	}
	return m.followFile(progressReloadedMsg{disk: msg.disk, applied: msg.applied})
}

// saver queues the changes in the order the program made them and writes
// them to the file in that order: the commands that carry them may run in
// any order, so each one writes every change queued so far. A later change
// wins where two touch the same field (the place to continue from).
type saver struct {
	issued uint64 // changes handed out (Update goroutine only)

	mu      sync.Mutex
	pending []func(*progress.Progress)
	applied uint64 // changes that reached the file, or failed to
}

func (s *saver) add(change func(*progress.Progress)) {
	s.mu.Lock()
	s.pending = append(s.pending, change)
	s.mu.Unlock()
}

// apply writes the queued changes; it returns the file's content after
// them, or nil when an earlier command already wrote them.
func (s *saver) apply(path string) (*progress.Progress, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	batch := s.pending
	s.pending = nil
	if len(batch) == 0 {
		return nil, s.applied, nil
	}
	s.applied += uint64(len(batch))
	p, err := progress.Update(path, func(p *progress.Progress) {
		for _, change := range batch {
			change(p)
		}
	})
	return p, s.applied, err
}
