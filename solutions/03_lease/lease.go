// Package lease is lab 4.1: a renewable lease (a lock that is kept by
// renewing it every TTL/2), which stops and reports as soon as a renewal
// fails, refuses to act late in its TTL, and a policy check for TTLs.
//
// This is the reference solution; graders overlay it on labs/03_lease/lease.go.
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
	// ErrLost is returned once a renewal has failed: the lease is gone
	// for good and the holder must stop acting as its owner.
	ErrLost = errors.New("lease: lost")
	// ErrBadPolicy is returned (wrapped) by LeasePolicy.Validate.
	ErrBadPolicy = errors.New("lease: bad policy")
)

// LeasePolicy is the timing of a lease: how long it lasts, how often the
// holder renews it, and the longest pause (GC, CPU starvation) the holder
// must survive without losing it.
type LeasePolicy struct {
	TTL         time.Duration
	RenewEvery  time.Duration
	PauseBudget time.Duration
}

// Validate checks that a holder can miss one renewal and still renew late,
// after a pause, before the TTL runs out: 2*RenewEvery + PauseBudget <= TTL.
// TTL and RenewEvery must be positive and PauseBudget not negative. Errors
// wrap ErrBadPolicy.
func (p LeasePolicy) Validate() error {
	switch {
	case p.TTL <= 0:
		return fmt.Errorf("%w: TTL %v must be positive", ErrBadPolicy, p.TTL)
	case p.RenewEvery <= 0:
		return fmt.Errorf("%w: RenewEvery %v must be positive", ErrBadPolicy, p.RenewEvery)
	case p.PauseBudget < 0:
		return fmt.Errorf("%w: PauseBudget %v must not be negative", ErrBadPolicy, p.PauseBudget)
	case 2*p.RenewEvery+p.PauseBudget > p.TTL:
		return fmt.Errorf("%w: 2 x RenewEvery (%v) + PauseBudget (%v) = %v is more than the TTL %v",
			ErrBadPolicy, p.RenewEvery, p.PauseBudget, 2*p.RenewEvery+p.PauseBudget, p.TTL)
	}
	return nil
}

// Lease is one owner's hold on a key. Run keeps it; MayAct tells the
// owner's workers whether they may still act. Safe for concurrent use.
type Lease struct {
	store *kv.Store
	key   string
	owner string
	ttl   time.Duration

	mu       sync.Mutex
	version  int64     // of our last successful write
	lockTime time.Time // when the request of that write was sent
	lost     bool
}

// Acquire takes the lease on key for owner if nobody holds it, and returns
// ErrHeld (wrapped or not) if somebody does. An empty owner or a TTL that
// is not positive is refused with an error before anything is written.
func Acquire(store *kv.Store, key, owner string, ttl time.Duration) (*Lease, error) {
	switch {
	case owner == "":
		// The store treats a key holding "" as absent: anybody could take it.
		return nil, fmt.Errorf("acquire lease %s: empty owner", key)
	case ttl <= 0:
		// A key written without a TTL never expires: a crashed holder
		// would keep the lease forever.
		return nil, fmt.Errorf("acquire lease %s: TTL %v must be positive", key, ttl)
	}
	// The store starts the TTL somewhere between our request and its
	// reply: the time before the request is the safe (earlier) side.
	sent := time.Now()
	v, ok, err := store.CompareAndSwap(key, "", owner, ttl)
	if err != nil {
		return nil, fmt.Errorf("acquire lease %s: %w", key, err)
	}
	if !ok {
		return nil, fmt.Errorf("acquire lease %s: %w", key, ErrHeld)
	}
	return &Lease{store: store, key: key, owner: owner, ttl: ttl, version: v, lockTime: sent}, nil
}

// Renew extends the lease by a full TTL from now, if it is still ours: the
// key must hold our owner value at the version of our last write. When it
// is not, the lease is lost for good and Renew returns ErrLost.
func (l *Lease) Renew() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return ErrLost
	}
	sent := time.Now() // before the request, as in Acquire
	v, err := l.store.Update(l.key, l.owner, l.version, l.owner, l.ttl)
	if err != nil {
		l.lost = true
		return fmt.Errorf("renew lease %s: %w (%v)", l.key, ErrLost, err)
	}
	l.version, l.lockTime = v, sent
	return nil
}

// Run renews the lease every TTL/2 until ctx ends (it returns ctx.Err()) or
// a renewal fails: then it calls onLost once, at once, and returns ErrLost.
// With a 1 ns TTL, TTL/2 rounds down to 0: Run then renews after 1 ns
// (finding the lease already expired) instead of spinning or panicking.
func (l *Lease) Run(ctx context.Context, onLost func()) error {
	tick := time.NewTicker(max(l.ttl/2, time.Nanosecond)) // NewTicker panics on 0
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if err := l.Renew(); err != nil {
				onLost()
				return err
			}
		}
	}
}

// MayAct reports whether the owner may still start work at now: the lease
// is not lost and now is before lockTime + 0.75 x TTL, lockTime being when
// the last successful acquire or renewal was sent.
// The last quarter of the TTL is a safety margin for pauses and clock
// drift between the holder and the store.
func (l *Lease) MayAct(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.lost && now.Before(l.lockTime.Add(l.ttl*3/4))
}
