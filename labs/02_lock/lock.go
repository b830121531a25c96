// Package lock is lab 3.1: a distributed lock on a compare-and-swap store,
// with try-lock, a blocking lock that waits for a change notification, and
// an unlock that cannot release somebody else's lock.
//
// Edit this file until `go test ./labs/02_lock/` passes. README.md explains
// the task step by step.
package lock

import (
	"context"
	"errors"
	"time"

	"github.com/ownership-election/playground/labs"
	"github.com/ownership-election/playground/labs/kv"
)

// ErrNotHeld is returned by Unlock when this Lock does not hold the key:
// it never locked, already unlocked, or its TTL ran out and the key was
// taken by someone else (or is gone).
var ErrNotHeld = errors.New("lock: not held by this owner")

// Lock is one client's handle on the lock stored under a key. Each replica
// has its own Lock; a Lock is used by one goroutine at a time.
type Lock struct {
	store *kv.Store
	key   string
	owner string        // the value this client writes under key
	ttl   time.Duration // the key expires ttl after it is written

	// TODO: remember what you need to unlock safely later (what did your
	// successful write return?).
}

// New returns a Lock on key for owner. It does not touch the store.
func New(store *kv.Store, key, owner string, ttl time.Duration) *Lock {
	return &Lock{store: store, key: key, owner: owner, ttl: ttl}
}

// TryLock makes one attempt to take the lock and returns at once: true if
// this call created the key, false if someone holds it. An empty owner is
// refused with an error: the store treats a key holding "" as absent.
func (l *Lock) TryLock() (bool, error) {
	// TODO: return an error if l.owner is "". Then create the key with
	// l.owner as its value and l.ttl as its TTL, only if it is absent
	// (store.CompareAndSwap with expected ""), and remember the version of
	// your write.
	return false, labs.ErrNotImplemented
}

// Lock blocks until it holds the lock, or until ctx is done (then it
// returns ctx.Err() and does not hold the lock). If a try fails with an
// error, Lock returns that error at once: waiting would not change it.
func (l *Lock) Lock(ctx context.Context) error {
	// TODO: try; if the lock is taken, wait for the key to change
	// (l.store.Watch) or ctx to end, then try again. Do not sleep and poll:
	// the test counts your requests to the store. Think about a release
	// that happens between your failed try and the start of your wait.
	return labs.ErrNotImplemented
}

// Unlock releases the lock if, and only if, this Lock still holds it. It
// returns ErrNotHeld (wrapped or not) otherwise, and then changes nothing.
func (l *Lock) Unlock() error {
	// TODO: delete the key only if it still holds your value at the version
	// your lock write got (store.CompareAndDelete). A plain Delete would
	// release whoever holds the lock now.
	return labs.ErrNotImplemented
}
