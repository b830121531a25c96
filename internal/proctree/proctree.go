// Package proctree starts a child process as the root of a tree of its
// own and ends the tree whole: the go command and the test binaries or
// compilers it starts, a replica and whatever the learner's code starts.
// Each caller picks its own signals (a supervisor asked to stop with
// SIGTERM ends its tree itself; a build is killed), so the package gives
// the pieces, not a policy: Group, KillGroupOnCancel, DieWithParent,
// SignalGroup, KillGroup; and Tail, the last of what a child wrote.
//
// Outside Unix there are no process groups: Group, KillGroupOnCancel and
// DieWithParent do nothing (exec's default, killing the child only, stays),
// and SignalGroup and KillGroup kill the child itself.
package proctree

import "sync"

// Tail keeps the last Max bytes written to it: a child's standard error,
// kept for the message that says why it ended without growing with a
// chatty child. It is safe for concurrent use, since exec copies a
// child's output on a goroutine of its own.
type Tail struct {
	max int
	mu  sync.Mutex
	b   []byte
}

// NewTail returns a Tail that keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps the last bytes of p (all of them when they fit) and never
// fails, so a child is never stopped for writing too much.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append([]byte(nil), t.b[over:]...)
	}
	return len(p), nil
}

// String is what was kept, as written.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
