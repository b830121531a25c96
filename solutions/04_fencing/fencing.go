// Package fencing is lab 5.1: the resource's half of safe ownership. A fenced
// storage rejects writes that carry an older token than it has already
// seen, and a worker accepts requests only from the current lock owner at
// the current lock version.
//
// This is the reference solution; graders overlay it on labs/04_fencing/fencing.go.
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

type register struct {
	value   string
	highest int64
}

// Storage holds one value per resource and, per resource, the highest
// fencing token it has accepted. Safe for concurrent use.
type Storage struct {
	mu        sync.Mutex
	resources map[string]register
}

// NewStorage returns an empty storage.
func NewStorage() *Storage {
	return &Storage{resources: map[string]register{}}
}

// Write stores value for resource if token is not lower than the highest
// token this resource has accepted (equal is fine: the same leader writes
// many times with one token). Otherwise it changes nothing and returns
// ErrStaleToken (wrapped or not). Tokens start at 1: a token of 0 or less
// never came from a lock and is refused the same way.
func (s *Storage) Write(resource string, token int64, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token <= 0 {
		return fmt.Errorf("write %s with token %d, which no lock hands out: %w", resource, token, ErrStaleToken)
	}
	r := s.resources[resource]
	if token < r.highest {
		return fmt.Errorf("write %s with token %d, already saw %d: %w", resource, token, r.highest, ErrStaleToken)
	}
	s.resources[resource] = register{value: value, highest: token}
	return nil
}

// Read returns resource's value and the highest token accepted for it.
func (s *Storage) Read(resource string) (value string, token int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.resources[resource]
	return r.value, r.highest
}

// Request is what a leader sends a worker: who it claims to be, the
// version of the lock write that made it owner, and the work.
type Request struct {
	LockKey string
	Owner   string
	Version int64
	Payload string
}

// Worker carries out requests, but only for the current owner of the lock
// named in each request, as the lock store says right now.
type Worker struct {
	locks *kv.Store

	mu      sync.Mutex
	applied []string
}

// NewWorker returns a worker that checks ownership in locks.
func NewWorker(locks *kv.Store) *Worker {
	return &Worker{locks: locks}
}

// Handle applies req.Payload if the lock key exists and holds req.Owner at
// exactly req.Version; otherwise it returns ErrNotOwner (wrapped or not)
// and applies nothing.
func (w *Worker) Handle(req Request) error {
	e, ok := w.locks.Get(req.LockKey)
	if !ok || e.Value != req.Owner || e.Version != req.Version {
		return fmt.Errorf("request from %s (version %d): %w", req.Owner, req.Version, ErrNotOwner)
	}
	w.apply(req.Payload)
	return nil
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
