package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/history"
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
	err := RetryTransient(ctx, func(ctx context.Context) error {
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
		r.Emit(history.Event{Kind: history.LeaseGranted, TTL: resp.TTL, Text: fmt.Sprintf("lease %x granted, %s", int64(resp.ID), history.TTLLabel(resp.TTL)),
			Facts: &history.Facts{Op: "grant", Revision: resp.GetRevision(), Succeeded: true, Lease: int64(resp.ID), GrantedTTL: resp.TTL}})
	}
	l.stopKeep = func() {}
	if keep {
		every := time.Duration(resp.TTL) * time.Second / 3
		kctx, cancel := context.WithCancel(ctx)
		l.stopKeep = cancel
		r.Keep(func() { l.keep(kctx, every) })
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

// Abandon stops renewing the lease and asks etcd to revoke it (best
// effort: a partitioned replica cannot, and the lease then simply expires).
func (l *Lease) Abandon(ctx context.Context) {
	l.stopKeep()
	if cli := l.r.Client(); cli != nil {
		rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		cli.Revoke(rctx, l.ID)
	}
}

// Lost is closed once the replica learns the lease is gone.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

func (l *Lease) markLost(text string, f *history.Facts) {
	l.lostOnce.Do(func() {
		close(l.lost)
		if !l.quiet {
			l.r.Emit(history.Event{Kind: history.LeaseExpired, TTL: l.TTL, Text: text, Facts: f})
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
			if errors.Is(err, ErrLeaseGone) {
				return
			}
		}
	}
}

// ErrLeaseGone: etcd no longer knows the lease (it expired or was
// revoked), so renewing it is over.
var ErrLeaseGone = errors.New("lease expired")

// Renew sends one keep-alive, and sends it again while the cluster
// elects a leader or a member is gone, for as long as the lease has time
// left by the replica's clock (the client's own rule). It marks the
// lease lost when etcd no longer knows it, or when no renewal has been
// answered for a whole TTL.
func (l *Lease) Renew(ctx context.Context) error { return l.renew(ctx, false) }

// RenewAnswered is Renew for a script that wants etcd's own answer to a
// renewal schedule: once the replica's deadline has passed it keeps
// asking, for as long as a leader change may take, and the renewal says
// when etcd's answer came after that deadline. A leader change restarts
// every lease's TTL, so etcd may well still have the lease then.
func (l *Lease) RenewAnswered(ctx context.Context) error { return l.renew(ctx, true) }

// keepAliveTry is the last try of a keep-alive and what the earlier
// ones met.
type keepAliveTry struct {
	resp     *clientv3.LeaseKeepAliveResponse
	sent     time.Time // by the replica's clock
	sentReal time.Time
	tries    int
	met      error // the last error a try met, nil if none
}

func (l *Lease) renew(ctx context.Context, untilAnswered bool) error {
	select {
	case <-l.lost:
		return ErrLeaseGone
	default:
	}
	cli := l.r.Client()
	if cli == nil {
		return fmt.Errorf("renew lease: crashed")
	}
	budget := max(l.r.RealDuration(l.Left()), 100*time.Millisecond)
	if untilAnswered {
		budget = max(l.r.RealDuration(l.Left()), 0) + l.r.run.timing.electionWait()
	}
	rctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	deadline := l.deadline()
	var t keepAliveTry
	err := RetryEach(rctx, l.r.run.timing.tryTimeout(), func(ctx context.Context) error {
		t.tries++
		t.sent, t.sentReal = l.r.Now(), time.Now()
		var err error
		if t.resp, err = cli.KeepAliveOnce(ctx, l.ID); err != nil {
			t.met = err
		}
		return err
	})
	switch {
	case err == nil && t.resp.TTL > 0:
		l.renewed(t, deadline)
		return nil
	case err == nil || isLeaseNotFound(err):
		l.markLost("renewal refused: etcd no longer knows the lease (it expired or was revoked)", &history.Facts{Op: "keepalive", Lease: int64(l.ID), TTLLeft: -1, Err: errText(err, "TTL 0"), Tries: t.tries})
		return ErrLeaseGone
	case ctx.Err() != nil:
		return ctx.Err()
	case untilAnswered:
		return fmt.Errorf("renew lease: etcd answered no keep-alive for %s: %w", budget.Round(100*time.Millisecond), err)
	case l.Left() <= 0:
		l.markLost("no renewal answered within the TTL: by its own clock the lease is over", &history.Facts{Op: "keepalive", Lease: int64(l.ID), Err: errText(err, ""), Tries: t.tries})
		return ErrLeaseGone
	default:
		return fmt.Errorf("renew lease: %w", err)
	}
}

// deadline is when the lease ends by the replica's clock.
func (l *Lease) deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expiresAt
}

// renewed records etcd's answer to the keep-alive t: the lease runs a
// TTL from when the answered try was sent.
func (l *Lease) renewed(t keepAliveTry, deadline time.Time) {
	l.r.run.leaseAnswered(l.ID, t.sentReal, t.resp.TTL)
	l.mu.Lock()
	l.expiresAt = t.sent.Add(time.Duration(t.resp.TTL) * time.Second)
	l.mu.Unlock()
	if l.quiet {
		return
	}
	f := &history.Facts{Op: "keepalive", Revision: t.resp.GetRevision(), Succeeded: true, Lease: int64(l.ID), GrantedTTL: t.resp.TTL, Tries: t.tries, Err: errText(t.met, "")}
	if late := l.r.Now().Sub(deadline); late > 0 {
		f.Overdue = late.Seconds()
	}
	l.r.Emit(history.Event{Kind: history.LeaseRenewed, TTL: t.resp.TTL, Text: RenewedText(f), Facts: f})
}

// RenewedText says what etcd answered a keep-alive, and what the tries
// before met.
func RenewedText(f *history.Facts) string {
	text := fmt.Sprintf("renewed: %s again", history.TTLLabel(f.GrantedTTL))
	if f.Overdue > 0 {
		text = fmt.Sprintf("renewed, %.2fs after its own deadline had passed: etcd still knew the lease, %s again", f.Overdue, history.TTLLabel(f.GrantedTTL))
	}
	if f.Tries > 1 {
		text += fmt.Sprintf(" (on try %d; the one before met: %s)", f.Tries, f.Err)
	}
	return text
}

func isLeaseNotFound(err error) bool {
	return err != nil && strings.Contains(err.Error(), "requested lease not found")
}
