package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Lease is a replica's etcd lease, optionally kept alive by a renewal loop
// that runs in the replica (so a pause stops it too).
type Lease struct {
	ID  clientv3.LeaseID
	TTL int64
	r   *Replica

	mu        sync.Mutex
	expiresAt time.Time // as of the last answered renewal
	lost      chan struct{}
	lostOnce  sync.Once
	stopKeep  context.CancelFunc
	quiet     bool // no lease-renewed events (many per-shard leases)
}

// Grant asks etcd for a lease. With keep, the replica renews it every
// TTL/3 (as concurrency.Session does) until ctx is done or it is lost.
func (r *Replica) Grant(ctx context.Context, ttl int64, keep bool) (*Lease, error) {
	return r.grant(ctx, ttl, keep, false)
}

func (r *Replica) grant(ctx context.Context, ttl int64, keep, quiet bool) (*Lease, error) {
	cli := r.Client()
	if cli == nil {
		return nil, fmt.Errorf("grant lease for %s: crashed", r.Name)
	}
	sent, sentReal := r.Now(), time.Now()
	var resp *clientv3.LeaseGrantResponse
	err := retryTransient(ctx, func(ctx context.Context) error {
		var err error
		resp, err = cli.Grant(ctx, ttl)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("grant lease for %s: %w", r.Name, err)
	}
	r.run.leaseAnswered(resp.ID, sentReal, resp.TTL)
	l := &Lease{ID: resp.ID, TTL: resp.TTL, r: r, expiresAt: sent.Add(time.Duration(resp.TTL) * time.Second), lost: make(chan struct{}), quiet: quiet}
	if !quiet {
		r.mu.Lock()
		r.lease = l
		r.mu.Unlock()
		r.Emit(Event{Kind: LeaseGranted, TTL: resp.TTL, Text: fmt.Sprintf("lease %x granted, %s", int64(resp.ID), TTLLabel(resp.TTL)),
			Facts: &Facts{Op: "grant", Revision: resp.GetRevision(), Succeeded: true, Lease: int64(resp.ID), GrantedTTL: resp.TTL}})
	}
	l.stopKeep = func() {}
	if keep {
		every := time.Duration(resp.TTL) * time.Second / 3
		kctx, cancel := context.WithCancel(ctx)
		l.stopKeep = cancel
		r.keepers.Add(1)
		go func() { defer r.keepers.Done(); l.keep(kctx, every) }()
	}
	return l, nil
}

// Left is the time left on the lease as the replica believes it: from its
// last answered renewal, by its own clock.
func (l *Lease) Left() time.Duration {
	now := l.r.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expiresAt.Sub(now)
}

// abandon stops renewing the lease and asks etcd to revoke it (best
// effort: a partitioned replica cannot, and the lease then simply expires).
func (l *Lease) abandon(ctx context.Context) {
	l.stopKeep()
	if cli := l.r.Client(); cli != nil {
		rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		cli.Revoke(rctx, l.ID)
	}
}

// Lost is closed once the replica learns the lease is gone.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

func (l *Lease) markLost(text string, f *Facts) {
	l.lostOnce.Do(func() {
		close(l.lost)
		if !l.quiet {
			l.r.Emit(Event{Kind: LeaseExpired, TTL: l.TTL, Text: text, Facts: f})
		}
	})
}

// errText is err's message, or orElse for no error.
func errText(err error, orElse string) string {
	if err == nil {
		return orElse
	}
	return err.Error()
}

func (l *Lease) keep(ctx context.Context, every time.Duration) {
	for {
		if err := l.r.Sleep(ctx, every); err != nil {
			return
		}
		if err := l.Renew(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errLeaseGone) {
				return
			}
		}
	}
}

var errLeaseGone = errors.New("lease expired")

// Renew sends one keep-alive. It marks the lease lost when etcd no longer
// knows it, or when no renewal has been answered for a whole TTL.
func (l *Lease) Renew(ctx context.Context) error {
	select {
	case <-l.lost:
		return errLeaseGone
	default:
	}
	cli := l.r.Client()
	if cli == nil {
		return fmt.Errorf("renew lease: crashed")
	}
	rctx, cancel := context.WithTimeout(ctx, max(l.r.realDuration(l.Left()), 100*time.Millisecond))
	defer cancel()
	sent, sentReal := l.r.Now(), time.Now()
	var resp *clientv3.LeaseKeepAliveResponse
	err := retryTransient(rctx, func(ctx context.Context) error {
		var err error
		resp, err = cli.KeepAliveOnce(ctx, l.ID)
		return err
	})
	switch {
	case err == nil && resp.TTL > 0:
		l.r.run.leaseAnswered(l.ID, sentReal, resp.TTL)
		l.mu.Lock()
		l.expiresAt = sent.Add(time.Duration(resp.TTL) * time.Second)
		l.mu.Unlock()
		if !l.quiet {
			l.r.Emit(Event{Kind: LeaseRenewed, TTL: resp.TTL, Text: fmt.Sprintf("renewed: %s again", TTLLabel(resp.TTL)),
				Facts: &Facts{Op: "keepalive", Revision: resp.GetRevision(), Succeeded: true, Lease: int64(l.ID), GrantedTTL: resp.TTL}})
		}
		return nil
	case err == nil || isLeaseNotFound(err):
		l.markLost("renewal refused: etcd no longer knows the lease (it expired or was revoked)", &Facts{Op: "keepalive", Lease: int64(l.ID), TTLLeft: -1, Err: errText(err, "TTL 0")})
		return errLeaseGone
	case ctx.Err() != nil:
		return ctx.Err()
	case l.Left() <= 0:
		l.markLost("no renewal answered within the TTL: by its own clock the lease is over", &Facts{Op: "keepalive", Lease: int64(l.ID), Err: errText(err, "")})
		return errLeaseGone
	default:
		return fmt.Errorf("renew lease: %w", err)
	}
}

func isLeaseNotFound(err error) bool {
	return err != nil && strings.Contains(err.Error(), "requested lease not found")
}
