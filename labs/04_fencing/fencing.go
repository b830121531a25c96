// Package fencing is lab 5.1: the resource's half of safe ownership. A fenced
// storage rejects writes that carry an older token than it has already
// seen, and a worker accepts requests only from the current lock owner at
// the current lock version.
//
// Edit this file until `go test ./labs/04_fencing/` passes. README.md
// explains the task step by step.
package fencing

import (
	"errors"
	"sync"

	"github.com/ownership-election/playground/labs"
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

// Storage holds one value per resource and, per resource, the highest
// fencing token it has accepted. Safe for concurrent use.
type Storage struct {
	mu sync.Mutex
	// TODO: per resource, its value and the highest token accepted.
}

// NewStorage returns an empty storage.
func NewStorage() *Storage {
	// TODO: initialise your map.
	return &Storage{}
}

// Write stores value for resource if token is not lower than the highest
// token this resource has accepted (equal is fine: the same leader writes
// many times with one token). Otherwise it changes nothing and returns
// ErrStaleToken (wrapped or not). Tokens start at 1: a token of 0 or less
// never came from a lock and is refused the same way.
func (s *Storage) Write(resource string, token int64, value string) error {
	// TODO: refuse token <= 0; compare with the resource's highest token,
	// then store the value and raise the highest token, all under s.mu.
	return labs.ErrNotImplemented
}

// Read returns resource's value and the highest token accepted for it.
func (s *Storage) Read(resource string) (value string, token int64) {
	// TODO
	return "", 0
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
	// TODO: read the lock key from w.locks, compare owner and version, and
	// call w.apply(req.Payload) only when both match.
	return labs.ErrNotImplemented
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
