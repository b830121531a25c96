// Variant: an append-only log of writes plus an index from key to its latest log position; the version is the log position.
package cas

import (
	"errors"
	"sync"
	"time"
)

// ErrKeyNotFound is returned by CompareAndSwap when the caller expects a
// value but the key is absent (never written, or expired).
var ErrKeyNotFound = errors.New("cas: key not found")

type write struct {
	key      string
	value    string
	deadline time.Time
}

// Store is an in-memory key-value store that is safe for concurrent use.
type Store struct {
	mu sync.Mutex
	// log[i] is the write that got version i+1; never shrinks, so a
	// version is never handed out twice.
	log []write
	// latest maps a present key to the index of its latest write in log;
	// -1 marks a key that has been found expired.
	latest map[string]int
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{latest: map[string]int{}}
}

// lookup returns the index of key's live write, or -1. s.mu held.
func (s *Store) lookup(key string) int {
	i, ok := s.latest[key]
	if !ok || i < 0 {
		return -1
	}
	if d := s.log[i].deadline; !d.IsZero() && time.Now().Compare(d) >= 0 {
		s.latest[key] = -1
		return -1
	}
	return i
}

// Get returns the value and version stored under key, and ok == true, if the
// key exists and has not expired. Otherwise it returns "", 0, false.
func (s *Store) Get(key string) (value string, version int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.lookup(key)
	if i < 0 {
		return "", 0, false
	}
	return s.log[i].value, int64(i + 1), true
}

// CompareAndSwap writes next under key, atomically, when the key currently
// holds expected. See the lab's README for the four cases.
func (s *Store) CompareAndSwap(key, expected, next string, ttl time.Duration) (version int64, swapped bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.lookup(key)
	switch {
	case i < 0 && expected != "":
		return 0, false, ErrKeyNotFound
	case i >= 0 && s.log[i].value != expected:
		return 0, false, nil
	}
	w := write{key: key, value: next}
	if ttl > 0 {
		w.deadline = time.Now().Add(ttl)
	}
	s.log = append(s.log, w)
	s.latest[key] = len(s.log) - 1
	return int64(len(s.log)), true, nil
}
