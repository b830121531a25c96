package tui

import (
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
)

// progressSavedMsg reports a background save.
type progressSavedMsg struct{ err error }

// save writes a snapshot of the progress in the background.
func (m *Model) save() tea.Cmd {
	if m.opts.ProgressPath == "" {
		return nil
	}
	snap, path := m.prog.Clone(), m.opts.ProgressPath
	m.saver.taken++
	seq, sv, saved := m.saver.taken, m.saver, m.opts.ProgressSaved
	return func() tea.Msg {
		err := sv.write(seq, path, snap)
		if err == nil && saved != nil {
			saved(snap)
		}
		return progressSavedMsg{err: err}
	}
}

// saver orders the background saves: snapshots are numbered as they are
// taken, and one that reaches the disk after a newer one is dropped, so
// fast paging never leaves an older record on disk.
type saver struct {
	taken   uint64 // last snapshot number handed out (Update only)
	mu      sync.Mutex
	written uint64 // newest snapshot on disk
}

func (s *saver) write(seq uint64, path string, p *progress.Progress) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq < s.written {
		return nil
	}
	if err := progress.Save(path, p); err != nil {
		return err
	}
	s.written = seq
	return nil
}

// forget applies a reset to the in-memory progress and to the file. The
// file is changed with progress.Update, not merged like a save: a merge
// keeps what either side has, so it would bring the forgotten record back.
// The reset takes the next snapshot number, so a save of an older
// snapshot still on its way is dropped rather than resurrecting it.
func (m *Model) forget(change func(*progress.Progress)) tea.Cmd {
	change(m.prog)
	if m.opts.ProgressPath == "" {
		return nil
	}
	path := m.opts.ProgressPath
	m.saver.taken++
	seq, sv, saved := m.saver.taken, m.saver, m.opts.ProgressSaved
	return func() tea.Msg {
		p, err := sv.update(seq, path, change)
		if err == nil && saved != nil {
			saved(p)
		}
		return progressSavedMsg{err: err}
	}
}

func (s *saver) update(seq uint64, path string, change func(*progress.Progress)) (*progress.Progress, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := progress.Update(path, change)
	if err != nil {
		return nil, err
	}
	s.written = max(s.written, seq)
	return p, nil
}
