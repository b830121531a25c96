// Package election is lab 7.2: a leader loop on etcd's concurrency.Election
// that stops its work the moment its session is lost, steps down cleanly,
// campaigns again, and never believes a Campaign whose key is gone.
//
// Edit this file until `go test ./labs/07_election/` passes. README.md
// explains the task step by step.
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

// SafeCampaign campaigns for leadership in e (whose session is s) with
// value val, and after Campaign returns checks that the candidate key
// still exists and was created at e.Rev(). It returns the Term won, the
// error from Campaign, or ErrKeyLost.
func SafeCampaign(ctx context.Context, s *concurrency.Session, e *concurrency.Election, val string) (Term, error) {
	if err := e.Campaign(ctx, val); err != nil {
		return Term{}, fmt.Errorf("campaign: %w", err)
	}
	// Campaign only waits for the keys older than ours to go away; it does
	// not look at ours again. If our lease was revoked while we waited,
	// it returns nil all the same (etcd issue 19597).
	resp, err := s.Client().Get(ctx, e.Key())
	if err != nil {
		return Term{}, fmt.Errorf("check our candidate key: %w", err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != e.Rev() {
		return Term{}, ErrKeyLost
	}
	return Term{Key: e.Key(), Token: e.Rev()}, nil
}

// Candidate runs for leader under Prefix, again and again, until the
// context given to Run ends.
type Candidate struct {
	Client *clientv3.Client
	Prefix string // the election's key prefix
	Name   string // the value this candidate campaigns with
	TTL    int    // session TTL in seconds
	// Work is called once per term won. Its context is cancelled when the
	// term ends: the session is lost or Run's context is done. Work must
	// return promptly after that.
	Work func(ctx context.Context, term Term)
}

// stepDownTimeout bounds Resign and Revoke when etcd cannot be reached:
// the lease then runs out by itself.
const stepDownTimeout = time.Second

// Run campaigns, runs Work for each term won, steps down after it, and
// campaigns again, until ctx is done. It returns nil once ctx is done and
// the candidate has resigned.
func (c *Candidate) Run(ctx context.Context) error {
	for {
		err := c.term(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// etcd unreachable or the session could not be made: try again
			// shortly rather than spin.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// term is one round: a fresh session, a campaign, the work, stepping down.
func (c *Candidate) term(ctx context.Context) error {
	// Grant with ctx so that shutdown is not held up by an unreachable
	// etcd; the session's keepalive itself must outlive ctx, or Resign
	// below would race the lease.
	lease, err := c.Client.Grant(ctx, int64(c.TTL))
	if err != nil {
		return fmt.Errorf("grant session lease: %w", err)
	}
	s, err := concurrency.NewSession(c.Client, concurrency.WithLease(lease.ID), concurrency.WithTTL(c.TTL))
	if err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), stepDownTimeout)
		defer cancel()
		c.Client.Revoke(rctx, lease.ID)
		return fmt.Errorf("new session: %w", err)
	}
	defer closeSession(s)
	e := concurrency.NewElection(s, c.Prefix)

	// Stop campaigning as soon as the session is gone: Campaign alone would
	// keep waiting for its elders although its own key has vanished.
	cctx, cancel := withSession(ctx, s)
	term, err := SafeCampaign(cctx, s, e, c.Name)
	cancel()
	if err != nil {
		return err
	}

	wctx, stop := withSession(ctx, s)
	c.Work(wctx, term)
	stop()

	select {
	case <-s.Done():
		// The lease is gone (or etcd has not answered for a TTL): etcd
		// deletes our key with it, and a resign could only hang on a dead
		// network.
		return nil
	default:
	}
	// Step down explicitly so the next leader does not wait for a TTL. If
	// the resign fails, the revoke in closeSession removes the key anyway.
	rctx, rcancel := context.WithTimeout(context.Background(), stepDownTimeout)
	defer rcancel()
	e.Resign(rctx)
	return nil
}

// withSession returns a context that is cancelled when parent is done or
// the session ends, whichever comes first.
func withSession(parent context.Context, s *concurrency.Session) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-s.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// closeSession ends the session: it revokes the lease (Close bounds that
// by the TTL, after which the lease has run out anyway), unless the lease
// is over already. Then there is nothing left to do: once Done() has
// closed, the session has stopped its keepalive and released its context
// by itself.
func closeSession(s *concurrency.Session) {
	select {
	case <-s.Done():
	default:
		s.Close()
	}
}
