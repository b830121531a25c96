// Style: one loop with exponential backoff (10 ms doubling to 1 s), the win checked by a comparison-only transaction, Work run in a goroutine and awaited, and Session.Close to step down.

// Package election is lab 7.2: a leader loop on etcd's concurrency.Election
// that stops its work the moment its session is lost, steps down cleanly,
// campaigns again, and never believes a Campaign whose key is gone.
package election

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// ErrKeyLost is returned by SafeCampaign when Campaign reported a win but
// the candidate's own key no longer exists (its session expired while it
// was waiting in line).
var ErrKeyLost = errors.New("election: campaign returned but our key is gone")

// Term is one stretch of leadership.
type Term struct {
	Key   string // this leader's key in etcd
	Token int64  // the key's CreateRevision: the fencing token for the term
}

// SafeCampaign campaigns and then asks etcd, in a transaction with no
// operations, whether our key is still the one created at e.Rev().
func SafeCampaign(ctx context.Context, s *concurrency.Session, e *concurrency.Election, val string) (Term, error) {
	if err := e.Campaign(ctx, val); err != nil {
		return Term{}, fmt.Errorf("campaign: %w", err)
	}
	resp, err := s.Client().Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(e.Key()), "=", e.Rev())).
		Commit()
	if err != nil {
		return Term{}, fmt.Errorf("verify our key: %w", err)
	}
	if !resp.Succeeded {
		return Term{}, ErrKeyLost
	}
	return Term{Key: e.Key(), Token: e.Rev()}, nil
}

// Candidate runs for leader under Prefix, again and again, until the
// context given to Run ends.
type Candidate struct {
	Client *clientv3.Client
	Prefix string
	Name   string
	TTL    int
	Work   func(ctx context.Context, term Term)
}

// Run campaigns, works, steps down and campaigns again until ctx is done.
func (c *Candidate) Run(ctx context.Context) error {
	const minWait, maxWait = 10 * time.Millisecond, time.Second
	wait := minWait
	for {
		err := c.round(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			wait = minWait
			continue
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		wait = min(2*wait, maxWait)
	}
}

func (c *Candidate) round(ctx context.Context) error {
	lease, err := c.Client.Grant(ctx, int64(c.TTL))
	if err != nil {
		return err
	}
	s, err := concurrency.NewSession(c.Client, concurrency.WithLease(lease.ID), concurrency.WithTTL(c.TTL))
	if err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.Client.Revoke(rctx, lease.ID)
		cancel()
		return err
	}
	e := concurrency.NewElection(s, c.Prefix)

	// One context for the whole term: cancelled by Run's context or by the
	// end of the session, whichever comes first.
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.Done():
			cancel()
		case <-tctx.Done():
		}
	}()

	term, err := SafeCampaign(tctx, s, e, c.Name)
	if err == nil {
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			c.Work(tctx, term)
		}()
		<-finished
	}

	lost := false
	select {
	case <-s.Done():
		lost = true
	default:
	}
	if err == nil && !lost {
		rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
		err = e.Resign(rctx)
		rcancel()
	}
	if lost {
		s.Orphan() // nothing to revoke: the lease is over
	} else {
		s.Close() // revokes the lease, bounded by the TTL
	}
	return err
}
