package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// lockWaitersScenario is the scenario lock-waiters (once thundering-herd).
var lockWaitersScenario = &experiment.Scenario{
	Name:    "lock-waiters",
	Title:   "Waiting for a lock: watch its key, or the waiter ahead",
	Summary: "Waiters line up behind a lock holder, which releases the lock three times. Once with every waiter watching the lock key, once with each watching only the key queued just before its own; wake-ups and requests are counted.",
	Faults:  "none: releases only",
	// Below ten the herd is too small to tell from the queue: the lock
	// key's watchers send n-2 requests a release on average over the
	// three releases, a predecessor watch 2 (a wake-up and its check),
	// and with fewer than four replicas the third release has nobody
	// left to wake.
	DefaultReplicas: 20, MinReplicas: 10, MaxReplicas: 50,
	// The waiters' leases only have to outlast a busy moment (twenty
	// keep-alives at once on a loaded cluster): the story is about
	// wake-ups, not about time.
	DefaultTTL: 5,
	Run:        runHerd,
	Predict:    herdQuestion,
	Shows:      []history.Property{{Name: "herd-wakes-all", Check: herdWakesAll}},
}

// herdReleases is how many releases each half of the experiment measures.
const herdReleases = 3

func runHerd(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	n := run.Params.Replicas
	for _, mode := range []string{"naive", "predecessor"} {
		text := "naive: every waiter watches the lock key and retries when it is deleted"
		if mode == "predecessor" {
			text = "predecessor watch: each waiter's key is queued by CreateRevision and it watches only the key just before its own"
		}
		run.Part(mode)
		if err := run.Phase(ctx, fmt.Sprintf("%s (%d replicas, %d releases)", text, n, herdReleases)); err != nil {
			return history.Verdict{}, err
		}
		w, q, err := herdMode(ctx, run, mode, n)
		if err != nil {
			return history.Verdict{}, fmt.Errorf("%s: %w", mode, err)
		}
		run.Figure(mode+"_wakeups_per_release", w, "wake-ups", fmt.Sprintf("%s: %.1f wake-ups per release", mode, w))
		run.Figure(mode+"_requests_per_release", q, "requests", fmt.Sprintf("%s: %.1f requests to etcd per release", mode, q))
	}
	return history.Verdict{}, nil
}

// herdWakesAll: watching the lock key wakes nearly every waiter on each
// release, watching the predecessor wakes one, and the herd costs
// several times the requests.
func herdWakesAll(f *history.Findings) (bool, string) {
	nw, ok1 := f.Figure("naive_wakeups_per_release")
	nq, ok2 := f.Figure("naive_requests_per_release")
	pw, ok3 := f.Figure("predecessor_wakeups_per_release")
	pq, ok4 := f.Figure("predecessor_requests_per_release")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return false, "the run did not measure both ways of waiting"
	}
	n := f.Params.Replicas
	say := fmt.Sprintf("per release, watching the lock key woke %.1f waiters who sent %.1f requests; watching the predecessor woke %.1f and sent %.1f", nw, nq, pw, pq)
	return pw <= 1.5 && nw >= float64(n-1-herdReleases) && nq > 3*pq, say
}

// herdMode lines up n replicas, releases the lock herdReleases times and
// returns the mean wake-ups and requests per release.
func herdMode(ctx context.Context, run *experiment.Run, mode string, n int) (float64, float64, error) {
	var st queueStats
	won := make(chan *experiment.Replica, n)
	release := map[*experiment.Replica]chan struct{}{}
	rs := make([]*experiment.Replica, n)
	for i := range rs {
		r, err := run.NewReplica(fmt.Sprintf("%s%d", mode[:1], i+1))
		if err != nil {
			return 0, 0, err
		}
		rs[i] = r
		release[r] = make(chan struct{})
	}
	defer func() {
		for _, r := range rs {
			r.Retire()
		}
	}()
	body := func(r *experiment.Replica) experiment.Body {
		if mode == "naive" {
			return naiveWaiter("herd-lock", &st, won, release[r])
		}
		return queueWaiter("herd-queue/", &st, won, release[r])
	}
	if err := rs[0].Start(body(rs[0])); err != nil {
		return 0, 0, err
	}
	holder, err := nextWinner(ctx, won)
	if err != nil {
		return 0, 0, err
	}
	for _, r := range rs[1:] {
		if err := r.Start(body(r)); err != nil {
			return 0, 0, err
		}
	}
	// Let every waiter settle into its watch before the first release:
	// each has sent its first request, and none has sent one for a while.
	if err := settle(ctx, &st, int64(n)); err != nil {
		return 0, 0, err
	}
	var wakeups, requests int64
	for range herdReleases {
		w0, q0 := st.wakeups.Load(), st.requests.Load()
		close(release[holder])
		next, err := nextWinner(ctx, won)
		if err != nil {
			return 0, 0, err
		}
		if err := settle(ctx, &st, 0); err != nil {
			return 0, 0, err
		}
		dw, dq := st.wakeups.Load()-w0, st.requests.Load()-q0
		next.Emit(history.Event{Kind: history.Note, Text: fmt.Sprintf("after %s released: %d wake-ups, %d requests", holder.Name, dw, dq)})
		wakeups, requests = wakeups+dw, requests+dq
		holder = next
	}
	return float64(wakeups) / herdReleases, float64(requests) / herdReleases, nil
}

// settle waits until at least least requests were sent and none for
// 300 ms (at most 10 s): what a release costs is counted once the
// waiters it woke are waiting again, however loaded the machine.
func settle(ctx context.Context, st *queueStats, least int64) error {
	deadline := time.Now().Add(10 * time.Second)
	last := int64(-1)
	for {
		now := st.requests.Load()
		if now == last && now >= least || time.Now().After(deadline) {
			return nil
		}
		last = now
		if err := experiment.Sleep(ctx, 300*time.Millisecond); err != nil {
			return err
		}
	}
}

func nextWinner(ctx context.Context, won <-chan *experiment.Replica) (*experiment.Replica, error) {
	select {
	case r := <-won:
		return r, nil
	case <-time.After(5 * time.Second):
		return nil, errors.New("nobody got the lock")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// naiveWaiter retries create-if-absent on the lock key every time the key
// is deleted; the release deletes it (one request, not counted).
func naiveWaiter(key string, st *queueStats, won chan<- *experiment.Replica, release <-chan struct{}) experiment.Body {
	return func(ctx context.Context, r *experiment.Replica) error {
		cli := r.Client()
		c := experiment.CreateKey{Key: key, Value: r.Name}
		for {
			a, err := c.Commit(ctx, cli, r.Run().TryTimeout())
			count(st, int64(a.Tries+len(a.Resolved)), 0)
			if err != nil {
				return fmt.Errorf("try %s: %w", key, err)
			}
			if a.Succeeded {
				got := history.Event{Kind: history.Acquired, Token: a.Revision, Facts: c.Facts(a), Text: fmt.Sprintf("got the lock: created %s at revision %d%s", key, a.Revision, experiment.ResolvedText(a.Resolved))}
				if !holdLock(ctx, r, got, won, release) {
					return nil
				}
				return releaseOwn(ctx, r, key)
			}
			if err := waitKeyDeleted(ctx, cli, key, a.Revision); err != nil {
				return err
			}
			count(st, 0, 1)
		}
	}
}

// holdLock is a waiter's turn as the lock's owner, the same whichever way
// it waited: r becomes the owner with got's token and says so (got is its
// Acquired event), tells the experiment it won, and holds the lock until
// the experiment releases it. It reports false when the run ended first;
// true once r is a follower again and must give the lock up in etcd.
func holdLock(ctx context.Context, r *experiment.Replica, got history.Event, won chan<- *experiment.Replica, release <-chan struct{}) bool {
	r.SetRole(experiment.RoleOwner, got.Token)
	r.Emit(got)
	won <- r
	select {
	case <-release:
	case <-ctx.Done():
		return false
	}
	r.SetRole(experiment.RoleFollower, 0)
	r.Emit(history.Event{Kind: history.Released, Text: "released the lock"})
	return true
}

// releaseOwn deletes key if it still holds the replica's name: sent
// again after a lost answer, it cannot delete the next holder's key.
func releaseOwn(ctx context.Context, r *experiment.Replica, key string) error {
	err := experiment.RetryEach(ctx, r.Run().TryTimeout(), func(ctx context.Context) error {
		_, err := r.Client().Txn(ctx).If(clientv3.Compare(clientv3.Value(key), "=", r.Name)).Then(clientv3.OpDelete(key)).Commit()
		return err
	})
	if err != nil {
		return fmt.Errorf("release %s: %w", key, err)
	}
	return nil
}

func waitKeyDeleted(ctx context.Context, cli *clientv3.Client, key string, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for wr := range cli.Watch(wctx, key, clientv3.WithRev(rev+1)) {
		if err := wr.Err(); err != nil {
			return fmt.Errorf("watch %s: %w", key, err)
		}
		for _, ev := range wr.Events {
			if ev.Type == mvccpb.DELETE {
				return nil
			}
		}
	}
	return ctx.Err()
}

// queueWaiter queues a leased key and waits on its predecessor only.
func queueWaiter(prefix string, st *queueStats, won chan<- *experiment.Replica, release <-chan struct{}) experiment.Body {
	return func(ctx context.Context, r *experiment.Replica) error {
		l, err := r.Grant(ctx, r.Run().TTL(), true)
		if err != nil {
			return err
		}
		tok, err := campaign(ctx, r, l, prefix, r.Name, st)
		if err != nil {
			return err
		}
		got := history.Event{Kind: history.Acquired, Token: tok, Text: fmt.Sprintf("got the lock: its key is the oldest in line (created at revision %d)", tok)}
		if !holdLock(ctx, r, got, won, release) {
			return nil
		}
		return resign(ctx, r, l, prefix, tok)
	}
}
