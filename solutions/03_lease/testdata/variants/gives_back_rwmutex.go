// Variant: a sync.RWMutex (MayAct takes the read lock), Run renews from a time.AfterFunc callback that reports on a channel, and gives the lease back with a compare-and-delete when its context ends (MayAct is false from then on); Validate checks the inequality by the pause budget left.
package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ownership-election/playground/labs/kv"
)

var (
	// ErrHeld is returned by Acquire when another owner holds the lease.
	ErrHeld = errors.New("lease: held by another owner")
	// ErrLost is returned once a renewal has failed.
	ErrLost = errors.New("lease: lost")
	// ErrBadPolicy is returned (wrapped) by LeasePolicy.Validate.
	ErrBadPolicy = errors.New("lease: bad policy")
)

// LeasePolicy is the timing of a lease.
type LeasePolicy struct {
	TTL         time.Duration
	RenewEvery  time.Duration
	PauseBudget time.Duration
}

// Validate checks 2*RenewEvery + PauseBudget <= TTL, with positive TTL and
// RenewEvery and a pause budget that is not negative.
func (p LeasePolicy) Validate() error {
	if p.TTL <= 0 || p.RenewEvery <= 0 || p.PauseBudget < 0 {
		return fmt.Errorf("%w: TTL %v and RenewEvery %v must be positive, PauseBudget %v not negative", ErrBadPolicy, p.TTL, p.RenewEvery, p.PauseBudget)
	}
	if left := p.TTL - 2*p.RenewEvery; p.PauseBudget > left {
		return fmt.Errorf("%w: renewing every %v leaves %v of a %v TTL for pauses, not %v", ErrBadPolicy, p.RenewEvery, left, p.TTL, p.PauseBudget)
	}
	return nil
}

// Lease is one owner's hold on a key.
type Lease struct {
	store *kv.Store
	key   string
	owner string
	ttl   time.Duration

	mu      sync.RWMutex
	version int64
	sent    time.Time
	over    bool // lost, or given back
}

// Acquire takes the lease on key for owner if nobody holds it.
func Acquire(store *kv.Store, key, owner string, ttl time.Duration) (*Lease, error) {
	if owner == "" || ttl <= 0 {
		return nil, fmt.Errorf("acquire %s: owner %q and TTL %v: need a name and a positive TTL", key, owner, ttl)
	}
	sent := time.Now()
	v, ok, err := store.CompareAndSwap(key, "", owner, ttl)
	switch {
	case err != nil:
		return nil, fmt.Errorf("acquire %s: %w", key, err)
	case !ok:
		return nil, ErrHeld
	}
	return &Lease{store: store, key: key, owner: owner, ttl: ttl, version: v, sent: sent}, nil
}

// Renew extends the lease by a full TTL if it is still ours.
func (l *Lease) Renew() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.over {
		return ErrLost
	}
	sent := time.Now()
	v, err := l.store.Update(l.key, l.owner, l.version, l.owner, l.ttl)
	if err != nil {
		l.over = true
		return fmt.Errorf("%w: %v", ErrLost, err)
	}
	l.version, l.sent = v, sent
	return nil
}

// Run renews the lease every TTL/2 until ctx ends or a renewal fails.
func (l *Lease) Run(ctx context.Context, onLost func()) error {
	every := l.ttl / 2
	if every < time.Nanosecond {
		every = time.Nanosecond
	}
	due := make(chan struct{}, 1)
	t := time.AfterFunc(every, func() { due <- struct{}{} })
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.giveBack()
			return ctx.Err()
		case <-due:
			if err := l.Renew(); err != nil {
				onLost()
				return err
			}
			t.Reset(every)
		}
	}
}

// giveBack deletes the key if it is still ours and ends the lease.
func (l *Lease) giveBack() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.over {
		l.store.CompareAndDelete(l.key, l.owner, l.version)
		l.over = true
	}
}

// MayAct reports whether the owner may still start work at now.
func (l *Lease) MayAct(now time.Time) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return !l.over && now.Before(l.sent.Add(l.ttl*3/4))
}
