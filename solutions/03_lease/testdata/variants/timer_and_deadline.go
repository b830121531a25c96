// Variant: Run re-arms a time.Timer after each renewal, the lease stores the end of its act window instead of the write time, Validate reports every problem at once with errors.Join.
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

// Validate checks 2*RenewEvery + PauseBudget <= TTL and the signs.
func (p LeasePolicy) Validate() error {
	var problems []error
	bad := func(format string, a ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrBadPolicy}, a...)...))
	}
	if p.TTL <= 0 {
		bad("TTL %v is not positive", p.TTL)
	}
	if p.RenewEvery <= 0 {
		bad("renewal interval %v is not positive", p.RenewEvery)
	}
	if p.PauseBudget < 0 {
		bad("pause budget %v is negative", p.PauseBudget)
	}
	if need := 2*p.RenewEvery + p.PauseBudget; need > p.TTL {
		bad("two renewal intervals and the pause budget need %v, the TTL is %v", need, p.TTL)
	}
	return errors.Join(problems...)
}

// Lease is one owner's hold on a key.
type Lease struct {
	store *kv.Store
	key   string
	owner string
	ttl   time.Duration

	mu       sync.RWMutex
	version  int64
	actUntil time.Time // last successful write + 0.75 x TTL
	lostErr  error     // non-nil once a renewal failed
}

// Acquire takes the lease on key for owner if nobody holds it.
func Acquire(store *kv.Store, key, owner string, ttl time.Duration) (*Lease, error) {
	if owner == "" || ttl <= 0 {
		return nil, fmt.Errorf("acquire %s: need an owner and a positive TTL (got %q, %v)", key, owner, ttl)
	}
	at := time.Now()
	v, ok, err := store.CompareAndSwap(key, "", owner, ttl)
	switch {
	case err != nil:
		return nil, fmt.Errorf("acquire %s: %w", key, err)
	case !ok:
		return nil, ErrHeld
	}
	return &Lease{store: store, key: key, owner: owner, ttl: ttl, version: v, actUntil: at.Add(ttl / 4 * 3)}, nil
}

// Renew extends the lease by a full TTL from now, if it is still ours.
func (l *Lease) Renew() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr != nil {
		return l.lostErr
	}
	at := time.Now()
	v, err := l.store.Update(l.key, l.owner, l.version, l.owner, l.ttl)
	if err != nil {
		l.lostErr = fmt.Errorf("%w: renewing %s: %v", ErrLost, l.key, err)
		l.actUntil = time.Time{}
		return l.lostErr
	}
	l.version = v
	l.actUntil = at.Add(l.ttl / 4 * 3)
	return nil
}

// Run renews the lease every TTL/2 until ctx ends or a renewal fails.
func (l *Lease) Run(ctx context.Context, onLost func()) error {
	every := l.ttl / 2
	if every <= 0 {
		every = time.Nanosecond // a 1 ns TTL: a timer of 0 would renew without ever waiting
	}
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		if err := l.Renew(); err != nil {
			onLost()
			return err
		}
		timer.Reset(every)
	}
}

// MayAct reports whether the owner may still start work at now.
func (l *Lease) MayAct(now time.Time) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.lostErr == nil && now.Before(l.actUntil)
}
