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

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/labs"
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
	// TODO: call e.Campaign(ctx, val) and return its error (wrapped).
	// Campaign returning nil is not enough: read e.Key() with
	// s.Client().Get and return ErrKeyLost unless the key exists and its
	// CreateRevision equals e.Rev(). Then return Term{e.Key(), e.Rev()}.
	return Term{}, labs.ErrNotImplemented
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

// Run campaigns, runs Work for each term won, steps down after it, and
// campaigns again, until ctx is done. It returns nil once ctx is done and
// the candidate has resigned.
func (c *Candidate) Run(ctx context.Context) error {
	// TODO: loop until ctx is done. Each round:
	//   1. a new session (a lost session cannot be reused), its lease
	//      granted with ctx so that a shutdown never hangs on an
	//      unreachable etcd: lease, err := c.Client.Grant(ctx,
	//      int64(c.TTL)), then concurrency.NewSession(c.Client,
	//      concurrency.WithLease(lease.ID));
	//   2. e := concurrency.NewElection(s, c.Prefix) and SafeCampaign;
	//   3. call c.Work with a context that is cancelled when ctx is done
	//      OR s.Done() closes (watch both in a goroutine), and wait for
	//      Work to return;
	//   4. then step down: e.Resign with a short timeout of its own (ctx
	//      may be cancelled already), and close the session (revoke its
	//      lease, with a timeout) even if Resign failed or the round
	//      failed earlier;
	//   5. on errors, wait a little (say 100 ms) before the next round
	//      instead of spinning, and never return before ctx is done.
	return labs.ErrNotImplemented
}
