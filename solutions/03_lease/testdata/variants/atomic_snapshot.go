// Variant: the lease's state is an immutable snapshot behind atomic.Pointer (MayAct takes no lock), Run releases the key with a compare-and-delete when its context ends.
package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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

// Validate checks 2*RenewEvery + PauseBudget <= TTL and the signs.
func (p LeasePolicy) Validate() error {
	if p.TTL <= 0 || p.RenewEvery <= 0 || p.PauseBudget < 0 {
		return fmt.Errorf("%w: TTL and RenewEvery must be positive and PauseBudget not negative (%+v)", ErrBadPolicy, p)
	}
	// What is left of the TTL after two renewal intervals must cover the pause.
	if slack := p.TTL - 2*p.RenewEvery; slack < p.PauseBudget {
		return fmt.Errorf("%w: %v left after two renewals, pause budget is %v", ErrBadPolicy, slack, p.PauseBudget)
	}
	return nil
}

type snapshot struct {
	version int64
	written time.Time
	lost    bool
}

// Lease is one owner's hold on a key.
type Lease struct {
	store *kv.Store
	key   string
	owner string
	ttl   time.Duration

	renewing sync.Mutex // one renewal at a time
	state    atomic.Pointer[snapshot]
}

// Acquire takes the lease on key for owner if nobody holds it.
func Acquire(store *kv.Store, key, owner string, ttl time.Duration) (*Lease, error) {
	if owner == "" {
		return nil, errors.New("lease: empty owner")
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("lease: TTL %v is not positive", ttl)
	}
	sent := time.Now()
	v, ok, err := store.CompareAndSwap(key, "", owner, ttl)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("lease %s: %w", key, ErrHeld)
	}
	l := &Lease{store: store, key: key, owner: owner, ttl: ttl}
	l.state.Store(&snapshot{version: v, written: sent})
	return l, nil
}

// Renew extends the lease by a full TTL from now, if it is still ours.
func (l *Lease) Renew() error {
	l.renewing.Lock()
	defer l.renewing.Unlock()
	cur := l.state.Load()
	if cur.lost {
		return fmt.Errorf("lease %s: %w", l.key, ErrLost)
	}
	sent := time.Now()
	v, err := l.store.Update(l.key, l.owner, cur.version, l.owner, l.ttl)
	if err != nil {
		l.state.Store(&snapshot{version: cur.version, lost: true})
		return fmt.Errorf("lease %s: %w (%v)", l.key, ErrLost, err)
	}
	l.state.Store(&snapshot{version: v, written: sent})
	return nil
}

// Run renews the lease every TTL/2 until ctx ends or a renewal fails. When
// ctx ends it gives the lease back, so a successor need not wait a TTL.
func (l *Lease) Run(ctx context.Context, onLost func()) error {
	tick := time.NewTicker(max(l.ttl/2, 1))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.release()
			return ctx.Err()
		case <-tick.C:
		}
		if err := l.Renew(); err != nil {
			onLost()
			return err
		}
	}
}

// release deletes the key if it is still ours, and marks the lease over.
func (l *Lease) release() {
	l.renewing.Lock()
	defer l.renewing.Unlock()
	cur := l.state.Load()
	if !cur.lost {
		_ = l.store.CompareAndDelete(l.key, l.owner, cur.version)
		l.state.Store(&snapshot{version: cur.version, lost: true})
	}
}

// MayAct reports whether the owner may still start work at now.
func (l *Lease) MayAct(now time.Time) bool {
	st := l.state.Load()
	return !st.lost && now.Sub(st.written) < l.ttl*3/4
}
