package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// leaderChangeScenario is the scenario leader-change (once leader-change-extends-leases).
var leaderChangeScenario = &experiment.Scenario{
	Name:            "leader-change",
	Title:           "A crashed client's lease while raft leadership moves",
	Summary:         "A client takes a lease, writes a key with it and crashes. With about a second of the lease left, raft leadership is moved to another member; TimeToLive is read throughout, until etcd deletes the key.",
	Faults:          "crash the lease holder; move the raft leader",
	NeedsCluster:    true,
	DefaultReplicas: 1, MinReplicas: 1, MaxReplicas: 1,
	DefaultTTL: 4,
	MinTTL:     3, // the leader moves with about 1 s of the lease left
	Run:        runLeaderChange,
	Predict:    leaderChangeQuestion,
	Shows:      []history.Property{{Name: "lease-extended", Check: leaseExtended}},
}

func runLeaderChange(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	if run.TTL() < 3 {
		return history.Verdict{}, fmt.Errorf("use a TTL of at least 3s: the move happens with about 1s left")
	}
	r, err := run.NewReplica("r1")
	if err != nil {
		return history.Verdict{}, fmt.Errorf("set up: %w", err)
	}
	// The one step to wait at: after it the lease's clock runs, and the
	// rest is announced, not waited for (a learner reading at a step
	// would let the lease expire before the move).
	if err := run.Phase(ctx, fmt.Sprintf("r1 takes a lease (%s), writes owner with it, and crashes; the rest runs through", history.TTLLabel(run.TTL()))); err != nil {
		return history.Verdict{}, err
	}
	l, err := writeAndCrash(ctx, r)
	if err != nil {
		return history.Verdict{}, err
	}
	crashed := time.Now()
	run.Announce("watch the lease's TTL drain, as etcd reports it (whole seconds, rounded down)")
	reading, err := drainTo(ctx, run, l, 1)
	if err != nil {
		return history.Verdict{}, err
	}
	// The reading just turned 1: 2 s are left. Wait one more second.
	if err := experiment.Sleep(ctx, time.Second); err != nil {
		return history.Verdict{}, err
	}
	left := time.Duration(run.TTL())*time.Second - time.Since(crashed)
	if err := moveWithLeft(ctx, run, l, left, reading); err != nil {
		return history.Verdict{}, err
	}
	moved := time.Now()
	run.Announce("wait for etcd to delete the key")
	gone := experiment.WaitFor(ctx, time.Duration(run.TTL())*time.Second+5*time.Second, func() bool {
		g, err := run.Admin().Get(ctx, "owner")
		return err == nil && len(g.Kvs) == 0
	})
	if !gone {
		return history.Verdict{}, errors.New("the key was never deleted")
	}
	afterMove, life := time.Since(moved), time.Since(crashed)
	run.Figure("gone_after_move_s", afterMove.Seconds(), "s", fmt.Sprintf("the key vanished %.2fs after the move, %.2fs after the crash (%s)", afterMove.Seconds(), life.Seconds(), history.TTLLabel(run.TTL())))
	run.Figure("left_at_move_s", left.Seconds(), "s", fmt.Sprintf("%.1fs of the lease were left when the leader moved", left.Seconds()))
	return history.Verdict{}, nil
}

// writeAndCrash has r take a lease, write owner on it and crash. r does
// its part as a process (its body), so that the crash stops it the way
// any other crash does: the body returns, the client closes, and the
// history records Crashed.
func writeAndCrash(ctx context.Context, r *experiment.Replica) (*experiment.Lease, error) {
	wrote := make(chan *experiment.Lease, 1)
	err := r.Start(func(ctx context.Context, r *experiment.Replica) error {
		l, err := writeOwner(ctx, r)
		if err != nil {
			return err
		}
		wrote <- l
		<-ctx.Done() // it holds on until it crashes
		return nil
	})
	if err != nil {
		return nil, err
	}
	select {
	case l := <-wrote:
		r.Crash(history.ByScript)
		return l, nil
	case <-r.Done():
		return nil, errors.New("r1 was gone before it wrote owner")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// writeOwner has r take a lease, not kept alive, and write owner on it.
func writeOwner(ctx context.Context, r *experiment.Replica) (*experiment.Lease, error) {
	if err := r.Await(ctx, "take a lease and write owner"); err != nil {
		return nil, err
	}
	l, err := r.Grant(ctx, r.Run().TTL(), false)
	if err != nil {
		return nil, err
	}
	resp, err := r.Client().Put(ctx, "owner", "r1", clientv3.WithLease(l.ID))
	if err != nil {
		return nil, fmt.Errorf("put owner: %w", err)
	}
	held := history.StoreKey{Key: "owner", Value: "r1", CreateRevision: resp.Header.Revision, ModRevision: resp.Header.Revision, Version: 1, Lease: int64(l.ID)}
	r.SetRole(experiment.RoleOwner, resp.Header.Revision)
	r.Emit(history.Event{Kind: history.Acquired, Token: resp.Header.Revision, TTL: l.TTL, Text: fmt.Sprintf("wrote owner with its lease at revision %d", resp.Header.Revision),
		Facts: &history.Facts{Op: "put", Key: "owner", Revision: resp.Header.Revision, Succeeded: true, Lease: int64(l.ID), Held: &held}})
	return l, nil
}

// ttlNow is what TimeToLive says is left of l, recorded as an event
// when it differs from last.
func ttlNow(ctx context.Context, run *experiment.Run, l *experiment.Lease, last int64, text string) (int64, error) {
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var resp *clientv3.LeaseTimeToLiveResponse
	err := experiment.RetryTransient(tctx, func(ctx context.Context) error {
		var err error
		resp, err = run.Admin().TimeToLive(ctx, l.ID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("read the lease's TTL: %w", err)
	}
	if resp.TTL != last {
		run.Emit(history.Event{Kind: history.Measured, TTL: resp.TTL, Value: float64(resp.TTL), Unit: "s", Text: fmt.Sprintf(text, resp.TTL),
			Facts: &history.Facts{Op: "timetolive", Lease: int64(l.ID), Succeeded: true, TTLLeft: resp.TTL}})
	}
	return resp.TTL, nil
}

// drainTo reads the lease's TTL until it reads at most until.
func drainTo(ctx context.Context, run *experiment.Run, l *experiment.Lease, until int64) (int64, error) {
	last := int64(-2)
	for {
		t, err := ttlNow(ctx, run, l, last, "TimeToLive says %ds left")
		if err != nil || t <= until {
			return t, err
		}
		last = t
		if err := experiment.Sleep(ctx, 50*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// moveWithLeft moves the raft leader on and reads the TTL right after.
func moveWithLeft(ctx context.Context, run *experiment.Run, l *experiment.Lease, left time.Duration, reading int64) error {
	cl := run.Cluster()
	members := cl.Members()
	lead, err := cl.Leader()
	if err != nil {
		return fmt.Errorf("find the raft leader: %w", err)
	}
	to := (lead + 1) % len(members)
	run.Announce(fmt.Sprintf("about %.1fs left: move raft leadership from %s to %s", left.Seconds(), members[lead].Name, members[to].Name))
	if err := run.MoveLeader(ctx, lead, to); err != nil {
		return err
	}
	if now, err := cl.Leader(); err == nil {
		run.Emit(history.Event{Kind: history.LeaderObserved, Text: "raft leader is now " + members[now].Name})
	}
	after, err := ttlNow(ctx, run, l, -3, fmt.Sprintf("right after the move TimeToLive says %%ds left (it said %ds before)", reading))
	if err != nil {
		return err
	}
	run.Figure("ttl_after_move", float64(after), "s", fmt.Sprintf("TimeToLive after the move: %ds", after))
	return nil
}

// leaseExtended: after the leader moved, TimeToLive read more time left
// than before with no renewal, and the key outlived the move by a TTL.
func leaseExtended(f *history.Findings) (bool, string) {
	move, ok := f.FirstEvent(history.KindIs(history.LeaderMoved, ""))
	if !ok {
		return false, "the raft leader never moved"
	}
	del, gone := f.FirstEvent(func(e history.Event) bool {
		return e.Kind == history.KeyChanged && e.Facts.Op == "delete" && e.Facts.Key == "owner"
	})
	grant, _ := f.FirstEvent(history.KindIs(history.LeaseGranted, ""))
	for _, x := range f.Extensions {
		if x.At < move.At {
			continue
		}
		say := fmt.Sprintf("after %s, TimeToLive went from %ds to %ds left with nobody renewing", move.Text, x.Before, x.After)
		if !gone {
			return false, say + ", but etcd never deleted the key"
		}
		lived := del.At - move.At
		say += fmt.Sprintf(", and etcd deleted the key %.2fs after the move", lived.Seconds())
		return lived >= time.Duration(grant.TTL)*time.Second, say
	}
	return false, fmt.Sprintf("after %s, TimeToLive never read more time left than before", move.Text)
}
