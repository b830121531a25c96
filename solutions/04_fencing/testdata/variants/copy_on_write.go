// Variant: the storage publishes an immutable map through an atomic.Pointer (Read takes no lock; Write copies the map under a mutex, compare and store in one section), and the worker checks the lock entry in a helper that says why a request is refused.
package fencing

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

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

type cell struct {
	value   string
	highest int64
}

// Storage holds one value per resource and its highest accepted token.
type Storage struct {
	mu    sync.Mutex // serialises writers
	cells atomic.Pointer[map[string]cell]
}

// NewStorage returns an empty storage.
func NewStorage() *Storage {
	s := &Storage{}
	empty := map[string]cell{}
	s.cells.Store(&empty)
	return s
}

// Write stores value if token is at least the highest accepted (and positive).
func (s *Storage) Write(resource string, token int64, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := *s.cells.Load()
	if c := cur[resource]; token <= 0 || token < c.highest {
		return fmt.Errorf("%w: %s has seen %d, got %d", ErrStaleToken, resource, c.highest, token)
	}
	next := maps.Clone(cur)
	next[resource] = cell{value: value, highest: token}
	s.cells.Store(&next)
	return nil
}

// Read returns resource's value and the highest token accepted for it.
func (s *Storage) Read(resource string) (value string, token int64) {
	c := (*s.cells.Load())[resource]
	return c.value, c.highest
}

// Request is what a leader sends a worker.
type Request struct {
	LockKey string
	Owner   string
	Version int64
	Payload string
}

// Worker carries out requests for the current owner of each request's lock.
type Worker struct {
	locks *kv.Store

	mu      sync.Mutex
	applied []string
}

// NewWorker returns a worker that checks ownership in locks.
func NewWorker(locks *kv.Store) *Worker {
	return &Worker{locks: locks}
}

// Handle applies req.Payload only for the lock's owner at its version.
func (w *Worker) Handle(req Request) error {
	if why := w.refusal(req); why != "" {
		return fmt.Errorf("%w: %s", ErrNotOwner, why)
	}
	w.apply(req.Payload)
	return nil
}

// refusal says why req may not be applied, "" when it may.
func (w *Worker) refusal(req Request) string {
	e, ok := w.locks.Get(req.LockKey)
	switch {
	case !ok:
		return "nobody holds " + req.LockKey
	case e.Value != req.Owner:
		return fmt.Sprintf("%s is held by %s", req.LockKey, e.Value)
	case e.Version != req.Version:
		return fmt.Sprintf("%s is at version %d, the request carries %d", req.LockKey, e.Version, req.Version)
	}
	return ""
}

// Applied returns the payloads applied so far, in order.
func (w *Worker) Applied() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.applied...)
}

func (w *Worker) apply(payload string) {
	w.mu.Lock()
	w.applied = append(w.applied, payload)
	w.mu.Unlock()
}
