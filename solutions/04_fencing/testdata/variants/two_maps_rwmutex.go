// Variant: values and highest tokens in two maps under a sync.RWMutex (Read takes the read lock); the worker checks each condition with its own early return.
package fencing

import (
	"errors"
	"fmt"
	"slices"
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

// Storage holds one value per resource and the highest token accepted.
type Storage struct {
	mu      sync.RWMutex
	values  map[string]string
	highest map[string]int64
}

// NewStorage returns an empty storage.
func NewStorage() *Storage {
	return &Storage{values: map[string]string{}, highest: map[string]int64{}}
}

// Write stores value for resource unless token is stale.
func (s *Storage) Write(resource string, token int64, value string) error {
	if token < 1 {
		return fmt.Errorf("%w: token %d was never handed out", ErrStaleToken, token)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bar := s.highest[resource]; token < bar {
		return fmt.Errorf("%w: %s has seen token %d, got %d", ErrStaleToken, resource, bar, token)
	}
	s.values[resource] = value
	s.highest[resource] = token
	return nil
}

// Read returns resource's value and the highest token accepted for it.
func (s *Storage) Read(resource string) (string, int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.values[resource], s.highest[resource]
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
	lock, held := w.locks.Get(req.LockKey)
	if !held {
		return fmt.Errorf("%w: nobody holds %s", ErrNotOwner, req.LockKey)
	}
	if lock.Value != req.Owner {
		return fmt.Errorf("%w: %s is held by %s, not %s", ErrNotOwner, req.LockKey, lock.Value, req.Owner)
	}
	if lock.Version != req.Version {
		return fmt.Errorf("%w: %s is at version %d, the request carries %d", ErrNotOwner, req.LockKey, lock.Version, req.Version)
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
	return slices.Clone(w.applied)
}
