// Package lease is lab 4.1: a renewable lease (a lock that is kept by
// renewing it every TTL/2), which stops and reports as soon as a renewal
// fails, refuses to act late in its TTL, and a policy check for TTLs.
//
// Edit this file until `go test ./labs/03_lease/` passes. README.md explains
// the task step by step.
package lease

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ownership-election/playground/labs"
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
	// TODO: return fmt.Errorf("%w: ...", ErrBadPolicy, ...) saying what is
	// wrong, or nil. Note the rule allows equality.
	return labs.ErrNotImplemented
}

// Lease is one owner's hold on a key. Run keeps it; MayAct tells the
// owner's workers whether they may still act. Safe for concurrent use.
type Lease struct {
	store *kv.Store
	key   string
	owner string
	ttl   time.Duration

	mu sync.Mutex // Run and MayAct are called from different goroutines
	// TODO: what must you remember to renew safely, to answer MayAct, and
	// to know that the lease is lost?
}

// Acquire takes the lease on key for owner if nobody holds it, and returns
// ErrHeld (wrapped or not) if somebody does. An empty owner or a TTL that
// is not positive is refused with an error before anything is written.
func Acquire(store *kv.Store, key, owner string, ttl time.Duration) (*Lease, error) {
	// TODO: refuse owner == "" and ttl <= 0 with an error. Then create the
	// key only if it is absent (as in lab 3.1's TryLock) and remember the
	// version and the time: read the clock just before the request.
	return nil, labs.ErrNotImplemented
}

// Renew extends the lease by a full TTL from now, if it is still ours: the
// key must hold our owner value at the version of our last write. When it
// is not, the lease is lost for good and Renew returns ErrLost.
func (l *Lease) Renew() error {
	// TODO: use l.store.Update (a compare-and-swap on value and version)
	// to rewrite the same value with a fresh TTL; remember the new version
	// and the time read just before the request; on failure, mark the
	// lease lost.
	return labs.ErrNotImplemented
}

// Run renews the lease every TTL/2 until ctx ends (it returns ctx.Err(),
// never nil, and does not call onLost) or a renewal fails: then it calls
// onLost once, at once, and returns ErrLost (wrapped or not). If it gives
// the lease back when ctx ends, it does so with a compare-and-delete of
// its own value and version, and MayAct is false from then on.
func (l *Lease) Run(ctx context.Context, onLost func()) error {
	// TODO: a time.Ticker and a select on ctx.Done() and the ticker. Mind
	// the 1 ns TTL: TTL/2 is 0 then, and time.NewTicker panics on 0.
	return labs.ErrNotImplemented
}

// MayAct reports whether the owner may still start work at now: the lease
// is not lost and now is before lockTime + 0.75 x TTL, lockTime being when
// the last successful acquire or renewal was sent.
// The last quarter of the TTL is a safety margin for pauses and clock
// drift between the holder and the store.
func (l *Lease) MayAct(now time.Time) bool {
	// TODO
	return false
}
