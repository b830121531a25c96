// Style: a term split into small methods, the key checked for both its revision and its lease, a context whose cause says why the term ended, fixed backoff with jitter, and an argument check on the TTL.

// Package election is lab 7.2: a leader loop on etcd's concurrency.Election
// that stops its work the moment its session is lost, steps down cleanly,
// campaigns again, and never believes a Campaign whose key is gone.
package election

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// ErrKeyLost is returned by SafeCampaign when Campaign reported a win but
// the candidate's own key no longer exists (its session expired while it
// was waiting in line).
var ErrKeyLost = errors.New("election: campaign returned but our key is gone")

// errSessionLost ends a term whose session has ended.
var errSessionLost = errors.New("election: session lost")

// Term is one stretch of leadership.
type Term struct {
	Key   string // this leader's key in etcd
	Token int64  // the key's CreateRevision: the fencing token for the term
}

// SafeCampaign campaigns, then re-reads our own key and checks both that
// it was created at e.Rev() and that it is still on our session's lease.
func SafeCampaign(ctx context.Context, s *concurrency.Session, e *concurrency.Election, val string) (Term, error) {
	select {
	case <-s.Done():
		return Term{}, fmt.Errorf("campaign: %w", errSessionLost)
	default:
	}
	if err := e.Campaign(ctx, val); err != nil {
		return Term{}, fmt.Errorf("campaign: %w", err)
	}
	resp, err := s.Client().Get(ctx, e.Key())
	if err != nil {
		return Term{}, fmt.Errorf("re-read %s: %w", e.Key(), err)
	}
	if len(resp.Kvs) != 1 {
		return Term{}, ErrKeyLost
	}
	kv := resp.Kvs[0]
	if kv.CreateRevision != e.Rev() || clientv3.LeaseID(kv.Lease) != s.Lease() {
		return Term{}, ErrKeyLost
	}
	return Term{Key: e.Key(), Token: kv.CreateRevision}, nil
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
	if c.TTL < 1 {
		return fmt.Errorf("election: TTL %d s is below etcd's minimum of 1 s", c.TTL)
	}
	for ctx.Err() == nil {
		if err := c.term(ctx); err != nil {
			c.pause(ctx)
		}
	}
	return nil
}

// pause waits 50 to 100 ms, or less if ctx ends.
func (c *Candidate) pause(ctx context.Context) {
	d := 50*time.Millisecond + rand.N(50*time.Millisecond)
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (c *Candidate) term(ctx context.Context) error {
	s, err := c.session(ctx)
	if err != nil {
		return err
	}
	defer c.close(s)
	e := concurrency.NewElection(s, c.Prefix)
	tctx, end := c.termContext(ctx, s)
	defer end(nil)
	term, err := SafeCampaign(tctx, s, e, c.Name)
	if err != nil {
		return err
	}
	c.Work(tctx, term)
	end(nil)
	if errors.Is(context.Cause(tctx), errSessionLost) {
		return nil // etcd deletes the key with the lease
	}
	return c.resign(e)
}

func (c *Candidate) session(ctx context.Context) (*concurrency.Session, error) {
	lease, err := c.Client.Grant(ctx, int64(c.TTL))
	if err != nil {
		return nil, fmt.Errorf("grant: %w", err)
	}
	s, err := concurrency.NewSession(c.Client, concurrency.WithLease(lease.ID), concurrency.WithTTL(c.TTL))
	if err != nil {
		c.revoke(lease.ID)
		return nil, fmt.Errorf("session: %w", err)
	}
	return s, nil
}

// termContext is cancelled, with errSessionLost as its cause, when the
// session ends, or when ctx does.
func (c *Candidate) termContext(ctx context.Context, s *concurrency.Session) (context.Context, context.CancelCauseFunc) {
	tctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-s.Done():
			cancel(errSessionLost)
		case <-tctx.Done():
		}
	}()
	return tctx, cancel
}

func (c *Candidate) resign(e *concurrency.Election) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.Resign(ctx); err != nil {
		return fmt.Errorf("resign: %w", err)
	}
	return nil
}

// close ends the session: its lease is revoked unless it has ended anyway.
func (c *Candidate) close(s *concurrency.Session) {
	select {
	case <-s.Done():
		s.Orphan()
		return
	default:
	}
	s.Orphan()
	c.revoke(s.Lease())
}

func (c *Candidate) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.Client.Revoke(ctx, id)
}
