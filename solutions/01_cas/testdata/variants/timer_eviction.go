// Variant: pointer entries evicted by time.AfterFunc, with a generation check against stale timers and a defensive deadline check on every read.
package cas

import (
	"errors"
	"sync"
	"time"
)

// ErrKeyNotFound is returned by CompareAndSwap when the caller expects a
// value but the key is absent (never written, or expired).
var ErrKeyNotFound = errors.New("cas: key not found")

type item struct {
	value    string
	version  int64
	expires  time.Time
	eviction *time.Timer
}

func (it *item) expired(now time.Time) bool {
	return !it.expires.IsZero() && !now.Before(it.expires)
}

// Store is an in-memory key-value store that is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	items map[string]*item
	seq   int64
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{items: make(map[string]*item)}
}

// find returns the live item under key or nil. s.mu held.
func (s *Store) find(key string) *item {
	it := s.items[key]
	if it == nil {
		return nil
	}
	if it.expired(time.Now()) {
		s.drop(key, it)
		return nil
	}
	return it
}

// drop removes it from the map if it is still the item under key. s.mu held.
func (s *Store) drop(key string, it *item) {
	if s.items[key] != it {
		return
	}
	if it.eviction != nil {
		it.eviction.Stop()
	}
	delete(s.items, key)
}

// Get returns the value and version stored under key, and ok == true, if the
// key exists and has not expired. Otherwise it returns "", 0, false.
func (s *Store) Get(key string) (string, int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it := s.find(key); it != nil {
		return it.value, it.version, true
	}
	return "", 0, false
}

// CompareAndSwap writes next under key, atomically, when the key currently
// holds expected. See the lab's README for the four cases.
func (s *Store) CompareAndSwap(key, expected, next string, ttl time.Duration) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.find(key)
	if cur == nil && expected != "" {
		return 0, false, ErrKeyNotFound
	}
	if cur != nil && cur.value != expected {
		return 0, false, nil
	}
	if cur != nil {
		s.drop(key, cur) // also stops its eviction timer
	}
	s.seq++
	it := &item{value: next, version: s.seq}
	if ttl > 0 {
		it.expires = time.Now().Add(ttl)
		it.eviction = time.AfterFunc(ttl, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.drop(key, it)
		})
	}
	s.items[key] = it
	return it.version, true, nil
}
