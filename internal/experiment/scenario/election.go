package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// queueStats counts what waiting in a lock queue cost: how often a waiter
// was woken and how many requests it sent.
type queueStats struct {
	wakeups  atomic.Int64
	requests atomic.Int64
}

var errKeyGone = errors.New("own queue key is gone (lease expired while waiting)")

// campaign joins the queue under prefix with a key bound to the lease and
// waits until that key is the oldest (lowest CreateRevision), watching
// only its predecessor, as concurrency.Mutex and Election do. The token it
// returns is the key's CreateRevision: the fencing token.
func campaign(ctx context.Context, r *experiment.Replica, l *experiment.Lease, prefix, value string, st *queueStats) (int64, error) {
	tok, _, err := campaignFacts(ctx, r, l, prefix, value, st)
	return tok, err
}

// campaignFacts is campaign that also returns what etcd answered when the
// replica found itself first in line: its own key as read then.
func campaignFacts(ctx context.Context, r *experiment.Replica, l *experiment.Lease, prefix, value string, st *queueStats) (int64, *history.Facts, error) {
	cli := r.Client()
	if cli == nil {
		return 0, nil, errors.New("campaign: crashed")
	}
	key := prefix + fmt.Sprintf("%016x", int64(l.ID))
	// The key is named after the lease, so it can only be this replica's:
	// a try that finds it there (or a read after a lost answer) takes
	// its CreateRevision.
	c := experiment.CreateKey{Key: key, Value: value, Lease: l.ID}
	cctx, cancel := whileLeased(ctx, l)
	a, err := c.Commit(cctx, cli, r.Run().TryTimeout())
	cancel()
	count(st, int64(a.Tries+len(a.Resolved)), 0)
	if err != nil {
		return 0, nil, fmt.Errorf("campaign %s: %w", key, err)
	}
	if a.Held == nil {
		return 0, nil, errKeyGone
	}
	myRev := a.Held.CreateRevision
	resolved := a.Resolved
	for {
		opts := append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(myRev-1), clientv3.WithPrefix())
		g, err := cli.Get(ctx, prefix, opts...)
		count(st, 1, 0)
		if err != nil {
			return 0, nil, fmt.Errorf("campaign %s: %w", key, err)
		}
		if len(g.Kvs) == 0 {
			own, err := cli.Get(ctx, key)
			count(st, 1, 0)
			if err != nil {
				return 0, nil, fmt.Errorf("campaign %s: %w", key, err)
			}
			if len(own.Kvs) == 0 {
				return 0, nil, errKeyGone
			}
			kv := experiment.StoreKeyOf(own.Kvs[0])
			return myRev, &history.Facts{Op: "get", Key: kv.Key, Revision: own.Header.Revision, Succeeded: true, Held: &kv, Lease: kv.Lease, Tries: a.Tries, Resolved: resolved}, nil
		}
		if err := waitDelete(ctx, cli, string(g.Kvs[0].Key), g.Header.Revision, l); err != nil {
			return 0, nil, err
		}
		count(st, 0, 1)
	}
}

// whileLeased is ctx, ended as well once the replica learns l is lost
// (a campaign does not go on sending for a lease that is gone), until
// the cancel it returns is called.
func whileLeased(ctx context.Context, l *experiment.Lease) (context.Context, context.CancelFunc) {
	lctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-l.Lost():
			cancel()
		case <-lctx.Done():
		}
	}()
	return lctx, cancel
}

func count(st *queueStats, requests, wakeups int64) {
	if st != nil {
		st.requests.Add(requests)
		st.wakeups.Add(wakeups)
	}
}

// waitDelete waits until key is deleted after revision rev.
func waitDelete(ctx context.Context, cli *clientv3.Client, key string, rev int64, l *experiment.Lease) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := cli.Watch(wctx, key, clientv3.WithRev(rev+1))
	var lost <-chan struct{}
	if l != nil {
		lost = l.Lost()
	}
	for {
		select {
		case wr, ok := <-wch:
			if !ok {
				return errors.New("watch closed")
			}
			if err := wr.Err(); err != nil {
				return fmt.Errorf("watch %s: %w", key, err)
			}
			for _, ev := range wr.Events {
				if ev.Type == mvccpb.DELETE {
					return nil
				}
			}
		case <-lost:
			return errKeyGone
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// resign deletes the owner's key if it is still the one it created.
func resign(ctx context.Context, r *experiment.Replica, l *experiment.Lease, prefix string, token int64) error {
	cli := r.Client()
	if cli == nil {
		return errors.New("resign: crashed")
	}
	key := prefix + fmt.Sprintf("%016x", int64(l.ID))
	// Guarded by the token, so sending it again after a lost answer
	// deletes nothing else.
	err := experiment.RetryEach(ctx, r.Run().TryTimeout(), func(ctx context.Context) error {
		_, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", token)).
			Then(clientv3.OpDelete(key)).Commit()
		return err
	})
	if err != nil {
		return fmt.Errorf("resign %s: %w", key, err)
	}
	return nil
}

// leaderLoop is the ordinary elected owner: take a lease renewed every
// TTL/3, campaign, and once owner write to the protected resource every
// writeEvery carrying the token; step down when the lease is lost, then
// campaign again.
//
// With localCheck the owner also refuses to write once its own clock says
// less than a quarter of the TTL is left since the last answered renewal
// (the "still mine and now < renewed + 0.75 TTL" check). Without it, the
// owner writes first and looks afterwards, like code that checked
// ownership some time ago: after a pause its first act is a write with
// its old token.
func leaderLoop(prefix string, writeEvery time.Duration, localCheck bool) experiment.Body {
	return leaderLoopTTL(prefix, writeEvery, localCheck, 0)
}

// leaderLoopTTL is leaderLoop with its own TTL (0: the run's).
func leaderLoopTTL(prefix string, writeEvery time.Duration, localCheck bool, ttl int64) experiment.Body {
	return func(ctx context.Context, r *experiment.Replica) error {
		for ctx.Err() == nil {
			r.SetRole(experiment.RoleCandidate, 0)
			t := ttl
			if t == 0 {
				t = r.Run().TTL()
			}
			l, err := r.Grant(ctx, t, true)
			if err != nil {
				if experiment.Sleep(ctx, 100*time.Millisecond) != nil {
					return nil
				}
				continue
			}
			tok, f, err := campaignFacts(ctx, r, l, prefix, r.Name, nil)
			if err != nil {
				l.Abandon(ctx)
				if experiment.Sleep(ctx, 50*time.Millisecond) != nil {
					return nil
				}
				continue
			}
			r.SetRole(experiment.RoleOwner, tok)
			r.Emit(history.Event{Kind: history.Acquired, Token: tok, TTL: l.TTL, Facts: f,
				Text: fmt.Sprintf("became owner with token %d: its key %s is the oldest in line (revision %d)", tok, f.Key, f.Revision)})
			if err := serve(ctx, r, l, tok, writeEvery, localCheck); err != nil {
				return nil
			}
		}
		return nil
	}
}

func serve(ctx context.Context, r *experiment.Replica, l *experiment.Lease, tok int64, writeEvery time.Duration, localCheck bool) error {
	for n := 1; ; n++ {
		if err := r.Sleep(ctx, writeEvery); err != nil {
			return err
		}
		if localCheck && l.Left() < time.Duration(l.TTL)*time.Second/4 {
			r.Emit(history.Event{Kind: history.SteppedDown, Token: tok, Text: fmt.Sprintf("local check: lease %s by its own clock; stops acting as owner", history.LeftLabel(l.Left()))})
			r.SetRole(experiment.RoleSteppedDown, 0)
			l.Abandon(ctx)
			return nil
		}
		// An owner works on the resource only in a scenario that has one
		// (singleton-vs-election's is about who holds the key).
		if r.Run().Scenario.Resource {
			r.Run().Resource().Write(r, tok, fmt.Sprintf("%s#%d", r.Name, n))
		}
		select {
		case <-l.Lost():
			r.Emit(history.Event{Kind: history.Lost, Token: tok, Text: "lease gone: no longer owner"})
			r.Emit(history.Event{Kind: history.SteppedDown, Token: tok, Text: "stopped acting as owner"})
			r.SetRole(experiment.RoleSteppedDown, 0)
			return nil
		default:
		}
	}
}
