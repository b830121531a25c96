// Variant: three parallel maps under a sync.RWMutex; Get takes only the read lock and checks the deadline inline.
package cas

import (
	"errors"
	"sync"
	"time"
)

// ErrKeyNotFound is returned by CompareAndSwap when the caller expects a
// value but the key is absent (never written, or expired).
var ErrKeyNotFound = errors.New("cas: key not found")

// Store is an in-memory key-value store that is safe for concurrent use.
type Store struct {
	mu        sync.RWMutex
	values    map[string]string
	versions  map[string]int64
	deadlines map[string]time.Time // only keys written with ttl > 0
	counter   int64
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{
		values:    make(map[string]string),
		versions:  make(map[string]int64),
		deadlines: make(map[string]time.Time),
	}
}

// alive reports whether key is present and not expired. The caller holds
// mu for reading at least.
func (s *Store) alive(key string, now time.Time) bool {
	if _, ok := s.values[key]; !ok {
		return false
	}
	d, has := s.deadlines[key]
	return !has || now.Before(d)
}

// Get returns the value and version stored under key, and ok == true, if the
// key exists and has not expired. Otherwise it returns "", 0, false.
func (s *Store) Get(key string) (value string, version int64, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.alive(key, time.Now()) {
		return "", 0, false
	}
	return s.values[key], s.versions[key], true
}

// CompareAndSwap writes next under key, atomically, when the key currently
// holds expected. See the lab's README for the four cases.
func (s *Store) CompareAndSwap(key, expected, next string, ttl time.Duration) (version int64, swapped bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	present := s.alive(key, now)
	if !present {
		if expected != "" {
			return 0, false, ErrKeyNotFound
		}
	} else if s.values[key] != expected {
		return 0, false, nil
	}
	s.counter++
	s.values[key] = next
	s.versions[key] = s.counter
	if ttl > 0 {
		s.deadlines[key] = now.Add(ttl)
	} else {
		delete(s.deadlines, key)
	}
	return s.counter, true, nil
}
