// Variant: a sync.RWMutex so that readers share the lock; Get only looks (an expired entry reads as absent and stays in the map), and CompareAndSwap, under the write lock, is the one that replaces an expired entry.
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
	value   string
	version int64
	expires time.Time
	forever bool
}

func (it item) liveAt(now time.Time) bool { return it.forever || now.Before(it.expires) }

// Store is an in-memory key-value store that is safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	items   map[string]item
	version int64
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{items: make(map[string]item)}
}

// Get returns the value and version under key while it has not expired.
// It writes nothing, so the read lock is enough.
func (s *Store) Get(key string) (string, int64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	it, ok := s.items[key]
	if !ok || !it.liveAt(time.Now()) {
		return "", 0, false
	}
	return it.value, it.version, true
}

// CompareAndSwap writes next under key when the key holds expected (an
// absent or expired key holds nothing, which only "" expects).
func (s *Store) CompareAndSwap(key, expected, next string, ttl time.Duration) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	it, ok := s.items[key]
	present := ok && it.liveAt(now)
	if !present && expected != "" {
		return 0, false, ErrKeyNotFound
	}
	if present && it.value != expected {
		return 0, false, nil
	}
	s.version++
	s.items[key] = item{value: next, version: s.version, expires: now.Add(ttl), forever: ttl == 0}
	return s.version, true, nil
}
