// Package cas is lab 2.1: an in-memory key-value store with compare-and-swap,
// versions and expiry, the primitive every later lab builds on.
//
// Edit this file until `go test ./labs/01_cas/` passes. README.md explains
// the task step by step.
package cas

import (
	"errors"
	"sync"
	"time"

	"github.com/ownership-election/playground/labs"
)

// ErrKeyNotFound is returned by CompareAndSwap when the caller expects a
// value but the key is absent (never written, or expired).
var ErrKeyNotFound = errors.New("cas: key not found")

// Store is an in-memory key-value store that is safe for concurrent use.
type Store struct {
	mu sync.Mutex
	// TODO: add what you need to remember: for each key its value, its
	// version and when it expires; and the last version handed out.
}

// NewStore returns an empty store.
func NewStore() *Store {
	// TODO: initialise any maps your Store uses.
	return &Store{}
}

// Get returns the value and version stored under key, and ok == true, if the
// key exists and has not expired. Otherwise it returns "", 0, false.
func (s *Store) Get(key string) (value string, version int64, ok bool) {
	// TODO: look the key up; a key whose deadline has been reached
	// (time.Now() is not before it) counts as absent.
	return "", 0, false
}

// CompareAndSwap writes next under key, atomically, when the key currently
// holds expected:
//
//   - key absent and expected == "": create it, return (version, true, nil)
//   - key absent and expected != "": return (0, false, ErrKeyNotFound)
//   - key present and its value == expected: overwrite, (version, true, nil)
//   - otherwise: change nothing, return (0, false, nil)
//
// A swap that does not write returns version 0 and changes nothing, not
// even the key's deadline. ErrKeyNotFound may be wrapped. "" is a value
// like any other: a key that holds "" is present.
//
// Every successful write gets a version larger than any version this store
// has handed out before, for any key, even one that has since expired.
// ttl > 0 makes the key expire ttl after this write (it is absent from
// that instant on); ttl == 0 means it never expires.
func (s *Store) CompareAndSwap(key, expected, next string, ttl time.Duration) (version int64, swapped bool, err error) {
	// TODO: hold s.mu for the whole check-and-write, treat an expired key
	// as absent, implement the four cases above, and remember the value,
	// the new version and the deadline (time.Now().Add(ttl)).
	return 0, false, labs.ErrNotImplemented
}
