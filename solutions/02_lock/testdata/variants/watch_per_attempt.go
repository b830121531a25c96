// Variant: a fresh watch for every attempt (opened before the try, closed after the wait), a ctx check before each attempt, and a held flag beside the version.
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
	store *kv.Store
	key   string
	owner string
	ttl   time.Duration

	held    bool
	version int64
}

// New returns a Lock on key for owner. It does not touch the store.
func New(store *kv.Store, key, owner string, ttl time.Duration) *Lock {
	return &Lock{store: store, key: key, owner: owner, ttl: ttl}
}

// TryLock makes one attempt to take the lock and returns at once.
func (l *Lock) TryLock() (bool, error) {
	switch {
	case l.owner == "":
		return false, fmt.Errorf("lock %s: empty owner", l.key)
	case l.ttl < 0:
		return false, fmt.Errorf("lock %s: negative TTL %v", l.key, l.ttl)
	}
	v, ok, err := l.store.CompareAndSwap(l.key, "", l.owner, l.ttl)
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", l.key, err)
	}
	if ok { // a failed try leaves what this Lock holds as it was
		l.held, l.version = true, v
	}
	return ok, nil
}

// attempt tries once and, if the lock is taken, waits for the next change
// of the key. It reports whether the lock is now held.
func (l *Lock) attempt(ctx context.Context) (bool, error) {
	changes, stop := l.store.Watch(l.key)
	defer stop()
	if ok, err := l.TryLock(); ok || err != nil {
		return ok, err
	}
	select {
	case <-changes:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Lock blocks until it holds the lock, or until ctx is done.
func (l *Lock) Lock(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ok, err := l.attempt(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
}

// Unlock releases the lock if, and only if, this Lock still holds it.
func (l *Lock) Unlock() error {
	if !l.held {
		return ErrNotHeld
	}
	l.held = false
	err := l.store.CompareAndDelete(l.key, l.owner, l.version)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kv.ErrKeyNotFound), errors.Is(err, kv.ErrConflict):
		return fmt.Errorf("unlock %s: %w", l.key, ErrNotHeld)
	default:
		return fmt.Errorf("unlock %s: %w", l.key, err)
	}
}
