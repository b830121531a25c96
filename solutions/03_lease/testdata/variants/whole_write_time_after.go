// Variant: the lease's write is one value (version and send time) replaced whole under the mutex, Run waits on time.After afresh for each renewal instead of a ticker, and Validate compares the slack left in the TTL.
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
	case p.TTL-2*p.RenewEvery < p.PauseBudget: // the slack left for pauses
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

	mu   sync.Mutex
	last write // our last successful write
	lost bool
}

// write is one successful acquire or renewal: its version, and when its
// request was sent.
type write struct {
	version int64
	sent    time.Time
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
	return &Lease{store: store, key: key, owner: owner, ttl: ttl, last: write{version: v, sent: sent}}, nil
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
	v, err := l.store.Update(l.key, l.owner, l.last.version, l.owner, l.ttl)
	if err != nil {
		l.lost = true
		return fmt.Errorf("renew lease %s: %w (%v)", l.key, ErrLost, err)
	}
	l.last = write{version: v, sent: sent}
	return nil
}

// Run renews the lease every TTL/2 until ctx ends (it returns ctx.Err()) or
// a renewal fails: then it calls onLost once, at once, and returns ErrLost.
// With a 1 ns TTL, TTL/2 rounds down to 0: Run then renews after 1 ns
// (finding the lease already expired) instead of spinning or panicking.
func (l *Lease) Run(ctx context.Context, onLost func()) error {
	every := max(l.ttl/2, time.Nanosecond)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
		if err := l.Renew(); err != nil {
			onLost()
			return err
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
	return !l.lost && now.Before(l.last.sent.Add(l.ttl*3/4))
}
