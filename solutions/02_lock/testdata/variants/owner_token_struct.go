// Variant: what the Lock holds is one small struct (set on a successful try, cleared by Unlock), Lock checks ctx before each attempt and keeps one watch for the whole call, and every refusal of Unlock names its reason.
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

// hold is the write that took the lock.
type hold struct {
	version int64
}

// Lock is one client's handle on the lock stored under a key.
type Lock struct {
	store *kv.Store
	key   string
	owner string
	ttl   time.Duration
	held  *hold // nil when this Lock holds nothing
}

// New returns a Lock on key for owner. It does not touch the store.
func New(store *kv.Store, key, owner string, ttl time.Duration) *Lock {
	return &Lock{store: store, key: key, owner: owner, ttl: ttl}
}

// TryLock makes one attempt to take the lock and returns at once.
func (l *Lock) TryLock() (bool, error) {
	if l.owner == "" {
		return false, errors.New("lock: an owner name is required")
	}
	v, ok, err := l.store.CompareAndSwap(l.key, "", l.owner, l.ttl)
	switch {
	case err != nil:
		return false, fmt.Errorf("try lock %s: %w", l.key, err)
	case !ok:
		return false, nil
	}
	l.held = &hold{version: v}
	return true, nil
}

// Lock blocks until it holds the lock, or until ctx is done.
func (l *Lock) Lock(ctx context.Context) error {
	changes, stop := l.store.Watch(l.key)
	defer stop()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ok, err := l.TryLock(); ok || err != nil {
			return err
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
	h := l.held
	if h == nil {
		return fmt.Errorf("unlock %s: nothing taken: %w", l.key, ErrNotHeld)
	}
	l.held = nil
	err := l.store.CompareAndDelete(l.key, l.owner, h.version)
	switch {
	case errors.Is(err, kv.ErrKeyNotFound):
		return fmt.Errorf("unlock %s: the key is gone: %w", l.key, ErrNotHeld)
	case errors.Is(err, kv.ErrConflict):
		return fmt.Errorf("unlock %s: the key was written since: %w", l.key, ErrNotHeld)
	case err != nil:
		return fmt.Errorf("unlock %s: %w", l.key, err)
	}
	return nil
}
