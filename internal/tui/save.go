package tui

import (
	"fmt"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
)

// progressSavedMsg reports a write of the progress file: the file's whole
// content after it (what this program and any other recorded, minus what
// was reset), and how many changes had reached the file then. On an error
// the changes stay queued (pending of them, in all).
type progressSavedMsg struct {
	err     error
	disk    *progress.Progress
	applied uint64
	pending int
	retried bool // a write that failed before went through this time
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
		return progressSavedMsg{err: err, disk: p, applied: applied, pending: sv.pendingCount(), retried: sv.takeRecovered()}
	}
}

// savedProgress handles the end of a write: a failure is shown and its
// changes wait for the next write; a success adopts the file.
func (m *Model) savedProgress(msg progressSavedMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		m.setNotice(fmt.Sprintf("could not save progress: %v (%d changes kept; saved with the next change or when you quit)", msg.err, msg.pending), true)
		return nil
	case msg.retried:
		m.setNotice("progress saved: the changes that could not be saved before are in the file now", false)
	}
	return m.changedIf(m.adopt(msg))
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

// FlushProgress writes the changes that are still waiting (a write that
// failed, one not yet run) to the progress file; call it once the program
// has ended. It returns how many could not be written, and why.
func (m Model) FlushProgress() (int, error) {
	if m.opts.ProgressPath == "" || m.saver == nil {
		return 0, nil
	}
	_, _, err := m.saver.apply(m.opts.ProgressPath)
	return m.saver.pendingCount(), err
}

// saver queues the changes in the order the program made them and writes
// them to the file in that order: the commands that carry them may run in
// any order, so each one writes every change queued so far. A later change
// wins where two touch the same field (the place to continue from). A
// write that fails leaves its changes queued, ahead of later ones, for the
// next write: none is dropped, and until they are written the program's
// copy is not replaced by the file's (which lacks them).
type saver struct {
	issued uint64 // changes handed out (Update goroutine only)

	mu        sync.Mutex
	pending   []func(*progress.Progress)
	applied   uint64 // changes that reached the file
	failed    bool   // the last write failed
	recovered bool   // a write succeeded after a failed one, not yet reported
	// update writes changes to the file; nil means progress.Update
	// (tests put a file system that fails in its place).
	update func(path string, change func(*progress.Progress)) (*progress.Progress, error)
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
	if len(batch) == 0 {
		return nil, s.applied, nil
	}
	update := s.update
	if update == nil {
		update = progress.Update
	}
	p, err := update(path, func(p *progress.Progress) {
		for _, change := range batch {
			change(p)
		}
	})
	if err != nil {
		s.failed = true
		return nil, s.applied, err
	}
	s.pending = nil
	s.applied += uint64(len(batch))
	s.recovered = s.recovered || s.failed
	s.failed = false
	return p, s.applied, nil
}

func (s *saver) pendingCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// takeRecovered reports, once, that a write went through after one failed.
func (s *saver) takeRecovered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recovered
	s.recovered = false
	return r
}
