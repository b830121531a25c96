// Variant: Lock tries first, opens the watch only after a failed try, and then reads the key again before it waits (try, watch, re-check).
package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ownership-election/playground/labs/kv"
)

// ErrNotHeld is returned by Unlock when this Lock does not hold the key:
// it never locked, already unlocked, or its TTL ran out and the key was
// taken by someone else (or is gone).
var ErrNotHeld = errors.New("lock: not held by this owner")

// Lock is one client's handle on the lock stored under a key.
type Lock struct {
	store   *kv.Store
	key     string
	owner   string
	ttl     time.Duration
	version int64 // of our lock write; 0 when not held
}

// New returns a Lock on key for owner. It does not touch the store.
func New(store *kv.Store, key, owner string, ttl time.Duration) *Lock {
	return &Lock{store: store, key: key, owner: owner, ttl: ttl}
}

// TryLock makes one attempt to take the lock and returns at once.
func (l *Lock) TryLock() (bool, error) {
	if l.owner == "" {
		return false, errors.New("lock: owner must not be empty")
	}
	v, ok, err := l.store.CompareAndSwap(l.key, "", l.owner, l.ttl)
	if err != nil || !ok {
		return false, err
	}
	l.version = v
	return true, nil
}

// Lock blocks until it holds the lock, or until ctx is done.
func (l *Lock) Lock(ctx context.Context) error {
	// The common case, a free lock, costs one request and no watch.
	if ok, err := l.TryLock(); ok || err != nil {
		return err
	}
	changes, stop := l.store.Watch(l.key)
	defer stop()
	for {
		// The watch is open now; a release between the failed try and
		// this read shows up here, one after it shows up in changes.
		if _, held := l.store.Get(l.key); !held {
			if ok, err := l.TryLock(); ok || err != nil {
				return err
			}
			continue
		}
		select {
		case <-changes:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Unlock releases the lock if, and only if, this Lock still holds it.
func (l *Lock) Unlock() error {
	v := l.version
	l.version = 0
	if v == 0 {
		return fmt.Errorf("unlock %s: %w", l.key, ErrNotHeld)
	}
	if err := l.store.CompareAndDelete(l.key, l.owner, v); err != nil {
		return fmt.Errorf("unlock %s: %w: %v", l.key, ErrNotHeld, err)
	}
	return nil
}
