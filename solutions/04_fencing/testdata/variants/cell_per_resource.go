// Variant: one cell with its own mutex per resource, found through a sync.Map; the worker also refuses requests with no lock key, no owner or a version below 1 before asking the store.
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

// cell is one resource: writes to different resources do not contend.
type cell struct {
	mu      sync.Mutex
	value   string
	highest int64
}

// Storage holds one value per resource and the highest token accepted.
type Storage struct {
	cells sync.Map // resource -> *cell
}

// NewStorage returns an empty storage.
func NewStorage() *Storage {
	return &Storage{}
}

func (s *Storage) cell(resource string) *cell {
	c, _ := s.cells.LoadOrStore(resource, &cell{})
	return c.(*cell)
}

// Write stores value for resource unless token is stale.
func (s *Storage) Write(resource string, token int64, value string) error {
	c := s.cell(resource)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case token <= 0:
		return fmt.Errorf("write %s: token %d: %w", resource, token, ErrStaleToken)
	case token < c.highest:
		return fmt.Errorf("write %s: token %d < %d: %w", resource, token, c.highest, ErrStaleToken)
	}
	c.value, c.highest = value, token
	return nil
}

// Read returns resource's value and the highest token accepted for it.
func (s *Storage) Read(resource string) (value string, token int64) {
	v, ok := s.cells.Load(resource)
	if !ok {
		return "", 0
	}
	c := v.(*cell)
	c.mu.Lock()
	defer c.mu.Unlock()
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

// Handle applies req.Payload only for the owner at the current version.
func (w *Worker) Handle(req Request) error {
	if req.LockKey == "" || req.Owner == "" || req.Version < 1 {
		return fmt.Errorf("malformed request %+v: %w", req, ErrNotOwner)
	}
	cur, ok := w.locks.Get(req.LockKey)
	if ok && cur == (kv.Entry{Value: req.Owner, Version: req.Version}) {
		w.apply(req.Payload)
		return nil
	}
	return fmt.Errorf("request from %s at version %d: %w", req.Owner, req.Version, ErrNotOwner)
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
