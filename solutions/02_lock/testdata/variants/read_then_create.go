// Variant: Lock watches first, then reads the key and only tries to create it when the read finds it absent.
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
	changes, stop := l.store.Watch(l.key)
	defer stop()
	for {
		// A read is cheaper for the store than a write that will fail;
		// the create below still decides, so a competitor between the
		// read and the create is harmless.
		if _, held := l.store.Get(l.key); !held {
			ok, err := l.TryLock()
			if err != nil {
				return err
			}
			if ok {
				return nil
			}
			continue // someone else created it first: read again
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
