package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// leaderChangeExtendsLeasesScenario is the scenario leader-change-extends-leases.
var leaderChangeExtendsLeasesScenario = &Scenario{
	Name:            "leader-change-extends-leases",
	Title:           "A raft leader change extends every lease",
	Summary:         "A client takes a lease, writes a key with it and crashes. With about a second of the lease left, raft leadership is moved to another member; TimeToLive is read throughout, until etcd deletes the key.",
	Faults:          "crash the lease holder; move the raft leader",
	NeedsCluster:    true,
	DefaultReplicas: 1, MinReplicas: 1, MaxReplicas: 1,
	DefaultTTL: 4,
	MinTTL:     3, // the leader moves with about 1 s of the lease left
	Run:        runLeaderChange,
	Shows:      []Property{{Check: leaseExtended}},
}

func runLeaderChange(ctx context.Context, run *Run) (Verdict, error) {
	v := Verdict{Figures: map[string]float64{}}
	if run.TTL() < 3 {
		return v, fmt.Errorf("use a TTL of at least 3s: the move happens with about 1s left")
	}
	cl := run.Cluster()
	members := cl.Members()
	r, err := run.newReplica("r1")
	if err != nil {
		return v, err
	}
	// The one step to wait at: after it the lease's clock runs, and the
	// rest is announced, not waited for (a learner reading at a step
	// would let the lease expire before the move).
	if err := run.Phase(ctx, fmt.Sprintf("r1 takes a lease (%s), writes owner with it, and crashes; the rest runs through", TTLLabel(run.TTL()))); err != nil {
		return v, err
	}
	if err := r.await(ctx, "take a lease and write owner"); err != nil {
		return v, err
	}
	l, err := r.Grant(ctx, run.TTL(), false)
	if err != nil {
		return v, err
	}
	if _, err := r.Client().Put(ctx, "owner", "r1", clientv3.WithLease(l.ID)); err != nil {
		return v, err
	}
	r.Emit(Event{Kind: Acquired, TTL: l.TTL, Text: "wrote owner with its lease"})
	r.crash(ByScript)
	crashed := time.Now()

	ttlNow := func() (int64, error) {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		resp, err := run.Admin().TimeToLive(tctx, l.ID)
		if err != nil {
			return 0, err
		}
		return resp.TTL, nil
	}
	run.Announce("watch the lease's TTL drain, as etcd reports it (whole seconds, rounded down)")
	last := int64(-2)
	var reading int64
	for {
		t, err := ttlNow()
		if err != nil {
			return v, fmt.Errorf("read TTL: %w", err)
		}
		if t != last {
			run.Emit(Event{Kind: Measured, TTL: t, Value: float64(t), Unit: "s", Text: fmt.Sprintf("TimeToLive says %ds left", t),
				Facts: &Facts{Op: "timetolive", Lease: int64(l.ID), Succeeded: true, TTLLeft: t}})
			last = t
		}
		if t <= 1 {
			reading = t
			break
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return v, err
		}
	}
	// The reading just turned 1: 2 s are left. Wait one more second.
	if err := sleep(ctx, time.Second); err != nil {
		return v, err
	}
	left := time.Duration(run.TTL())*time.Second - time.Since(crashed)
	lead, err := cl.Leader()
	if err != nil {
		return v, err
	}
	to := (lead + 1) % len(members)
	run.Announce(fmt.Sprintf("about %.1fs left: move raft leadership from %s to %s", left.Seconds(), members[lead].Name, members[to].Name))
	if err := run.moveLeader(ctx, lead, to); err != nil {
		return v, err
	}
	moved := time.Now()
	if now, err := cl.Leader(); err == nil {
		run.Emit(Event{Kind: LeaderObserved, Text: "raft leader is now " + members[now].Name})
	}
	after, err := ttlNow()
	if err != nil {
		return v, fmt.Errorf("read TTL after the move: %w", err)
	}
	run.Emit(Event{Kind: Measured, Figure: "ttl_after_move", TTL: after, Value: float64(after), Unit: "s", Text: fmt.Sprintf("right after the move TimeToLive says %ds left (it said %ds before)", after, reading),
		Facts: &Facts{Op: "timetolive", Lease: int64(l.ID), Succeeded: true, TTLLeft: after}})

	run.Announce("wait for etcd to delete the key")
	gone := waitFor(ctx, time.Duration(run.TTL())*time.Second+5*time.Second, func() bool {
		g, err := run.Admin().Get(ctx, "owner")
		return err == nil && len(g.Kvs) == 0
	})
	if !gone {
		return v, errors.New("the key was never deleted")
	}
	afterMove, life := time.Since(moved), time.Since(crashed)
	run.figure("gone_after_move_s", afterMove.Seconds(), "s", fmt.Sprintf("the key vanished %.2fs after the move, %.2fs after the crash (%s)", afterMove.Seconds(), life.Seconds(), TTLLabel(run.TTL())))
	run.figure("left_at_move_s", left.Seconds(), "s", fmt.Sprintf("%.1fs of the lease were left when the leader moved", left.Seconds()))
	return v, nil
}

// leaseExtended: after the leader moved, TimeToLive read more time left
// than before with no renewal, and the key outlived the move by a TTL.
func leaseExtended(f *Findings) (bool, string) {
	move, ok := f.firstEvent(kindIs(LeaderMoved, ""))
	if !ok {
		return false, "the raft leader never moved"
	}
	del, gone := f.firstEvent(func(e Event) bool { return e.Kind == KeyChanged && e.Facts.Op == "delete" && e.Facts.Key == "owner" })
	grant, _ := f.firstEvent(kindIs(LeaseGranted, ""))
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
