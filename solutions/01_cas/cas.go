// Package cas is lab 2.1: an in-memory key-value store with compare-and-swap,
// versions and expiry, the primitive every later lab builds on.
//
// This is the reference solution; graders overlay it on labs/01_cas/cas.go.
package cas

import (
	"errors"
	"sync"
	"time"
)

// ErrKeyNotFound is returned by CompareAndSwap when the caller expects a
// value but the key is absent (never written, or expired).
var ErrKeyNotFound = errors.New("cas: key not found")

type entry struct {
	value    string
	version  int64
	deadline time.Time // zero: never expires
}

// Store is an in-memory key-value store that is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	entries map[string]entry
	// last is store-wide, not per key: a per-key counter would start again
	// at 1 after expiry and a stale holder's version would match again.
	last int64
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{entries: map[string]entry{}}
}

// Get returns the value and version stored under key, and ok == true, if the
// key exists and has not expired. Otherwise it returns "", 0, false.
func (s *Store) Get(key string) (value string, version int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(key)
	return e.value, e.version, ok
}

// CompareAndSwap writes next under key, atomically, when the key currently
// holds expected:
//
//   - key absent and expected == "": create it, return (version, true, nil)
//   - key absent and expected != "": return (0, false, ErrKeyNotFound)
//   - key present and its value == expected: overwrite, (version, true, nil)
//   - otherwise: change nothing, return (0, false, nil)
//
// Every successful write gets a version larger than any version this store
// has handed out before, for any key, even one that has since expired.
// ttl > 0 makes the key expire ttl after this write (it is absent from
// that instant on); ttl == 0 means it never expires.
func (s *Store) CompareAndSwap(key, expected, next string, ttl time.Duration) (version int64, swapped bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(key)
	switch {
	case !ok && expected != "":
		return 0, false, ErrKeyNotFound
	case ok && e.value != expected:
		return 0, false, nil
	}
	s.last++
	e = entry{value: next, version: s.last}
	if ttl > 0 {
		e.deadline = time.Now().Add(ttl)
	}
	s.entries[key] = e
	return e.version, true, nil
}

// live returns the entry under key, treating (and dropping) an expired one
// as absent. s.mu must be held.
func (s *Store) live(key string) (entry, bool) {
	e, ok := s.entries[key]
	if ok && !e.deadline.IsZero() && !time.Now().Before(e.deadline) {
		delete(s.entries, key)
		return entry{}, false
	}
	return e, ok
}
