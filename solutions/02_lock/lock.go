// Package lock is lab 3.1: a distributed lock on a compare-and-swap store,
// with try-lock, a blocking lock that waits for a change notification, and
// an unlock that cannot release somebody else's lock.
//
// This is the reference solution; graders overlay it on labs/02_lock/lock.go.
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

// errNoOwner refuses an empty owner: CompareAndSwap treats a key holding ""
// like an absent one, so anybody could take such a lock over.
var errNoOwner = errors.New("lock: empty owner name")

// Lock is one client's handle on the lock stored under a key. Each replica
// has its own Lock; a Lock is used by one goroutine at a time.
type Lock struct {
	store *kv.Store
	key   string
	owner string        // the value this client writes under key
	ttl   time.Duration // the key expires ttl after it is written

	// version is what our lock write got; 0 when we do not hold the lock.
	// Unlock compares it so that a lock taken after ours expired, even by
	// a client writing the same value, is never released by us.
	version int64
}

// New returns a Lock on key for owner. It does not touch the store.
func New(store *kv.Store, key, owner string, ttl time.Duration) *Lock {
	return &Lock{store: store, key: key, owner: owner, ttl: ttl}
}

// TryLock makes one attempt to take the lock and returns at once: true if
// this call created the key, false if someone holds it. An empty owner is
// refused with an error: the store treats a key holding "" as absent.
func (l *Lock) TryLock() (bool, error) {
	if l.owner == "" {
		return false, errNoOwner
	}
	v, ok, err := l.store.CompareAndSwap(l.key, "", l.owner, l.ttl)
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", l.key, err)
	}
	if ok {
		l.version = v
	}
	return ok, nil
}

// Lock blocks until it holds the lock, or until ctx is done (then it
// returns ctx.Err() and does not hold the lock). If a try fails with an
// error, Lock returns that error at once: waiting would not change it.
func (l *Lock) Lock(ctx context.Context) error {
	// Watch before the first try: a release that lands between a failed
	// try and the wait still leaves a signal in the channel.
	changes, stop := l.store.Watch(l.key)
	defer stop()
	for {
		ok, err := l.TryLock()
		if err != nil || ok {
			return err
		}
		select {
		case <-changes:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Unlock releases the lock if, and only if, this Lock still holds it. It
// returns ErrNotHeld (wrapped or not) otherwise, and then changes nothing.
func (l *Lock) Unlock() error {
	if l.version == 0 {
		return ErrNotHeld
	}
	err := l.store.CompareAndDelete(l.key, l.owner, l.version)
	l.version = 0
	if errors.Is(err, kv.ErrKeyNotFound) || errors.Is(err, kv.ErrConflict) {
		return fmt.Errorf("unlock %s: %w (%v)", l.key, ErrNotHeld, err)
	}
	return err
}
