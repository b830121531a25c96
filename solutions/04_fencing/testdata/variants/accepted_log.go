// Variant: each resource keeps the log of the writes it accepted (the bar is the token of the last entry, since accepted tokens never go down), an empty log meaning "never written"; the worker refuses with a reason per failed check.
package fencing

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ownership-election/playground/labs/kv"
)

var (
	// ErrStaleToken is returned by Storage.Write for a token lower than
	// the highest the resource has accepted.
	ErrStaleToken = errors.New("fencing: stale token")
	// ErrNotOwner is returned by Worker.Handle for a request whose sender
	// is not the lock's current owner at the current version.
	ErrNotOwner = errors.New("fencing: sender does not own the lock")
)

type accepted struct {
	token int64
	value string
}

// Storage keeps, per resource, every write it accepted, in order.
type Storage struct {
	mu  sync.RWMutex
	log map[string][]accepted
}

// NewStorage returns an empty storage.
func NewStorage() *Storage {
	return &Storage{log: make(map[string][]accepted)}
}

// last is resource's latest accepted write; ok is false when there is
// none. s.mu must be held.
func (s *Storage) last(resource string) (accepted, bool) {
	l := s.log[resource]
	if len(l) == 0 {
		return accepted{}, false
	}
	return l[len(l)-1], true
}

// Write appends value to resource's log unless token is below the last
// accepted token (or not a token at all).
func (s *Storage) Write(resource string, token int64, value string) error {
	if token < 1 {
		return fmt.Errorf("token %d: %w", token, ErrStaleToken)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.last(resource); ok && token < prev.token {
		return fmt.Errorf("token %d below %d: %w", token, prev.token, ErrStaleToken)
	}
	s.log[resource] = append(s.log[resource], accepted{token: token, value: value})
	return nil
}

// Read returns the latest accepted value and its token.
func (s *Storage) Read(resource string) (string, int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, _ := s.last(resource)
	return a.value, a.token
}

// Request is what a leader sends a worker.
type Request struct {
	LockKey string
	Owner   string
	Version int64
	Payload string
}

// Worker applies requests from the lock's current owner only.
type Worker struct {
	locks   *kv.Store
	mu      sync.Mutex
	applied []string
}

// NewWorker returns a worker that checks ownership in locks.
func NewWorker(locks *kv.Store) *Worker {
	return &Worker{locks: locks}
}

// Handle applies req.Payload when the lock exists and holds req.Owner at
// req.Version.
func (w *Worker) Handle(req Request) error {
	e, ok := w.locks.Get(req.LockKey)
	switch {
	case !ok:
		return fmt.Errorf("%s is not held: %w", req.LockKey, ErrNotOwner)
	case e.Value != req.Owner:
		return fmt.Errorf("%s is held by %q, not %q: %w", req.LockKey, e.Value, req.Owner, ErrNotOwner)
	case e.Version != req.Version:
		return fmt.Errorf("%s is at version %d, not %d: %w", req.LockKey, e.Version, req.Version, ErrNotOwner)
	}
	w.mu.Lock()
	w.applied = append(w.applied, req.Payload)
	w.mu.Unlock()
	return nil
}

// Applied returns the payloads applied so far, in order.
func (w *Worker) Applied() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.applied...)
}
