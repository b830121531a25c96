package experiment

import (
	"context"
	"fmt"
	"time"
)

// quorumScenario is the scenario quorum.
var quorumScenario = &Scenario{
	Name:            "quorum",
	Resource:        true,
	Title:           "A lease is only as available as etcd's quorum",
	Summary:         "On a 3-member in-process cluster: with one member down writes and lease grants work; with two down they stall, and the owner cannot renew; when a member comes back, they work again.",
	Faults:          "stop etcd members, then restart them",
	NeedsCluster:    true,
	DefaultReplicas: 1, MinReplicas: 1, MaxReplicas: 3,
	DefaultTTL: 1,
	Run:        runQuorum,
}

// probe tries a write and a lease grant, each bounded by d; it reports
// whether both got through.
func probe(ctx context.Context, run *Run, d time.Duration) bool {
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if _, err := run.Admin().Put(pctx, "probe", fmt.Sprint(time.Now().UnixNano())); err != nil {
		return false
	}
	g, err := run.Admin().Grant(pctx, 5)
	if err != nil {
		return false
	}
	run.Admin().Revoke(ctx, g.ID)
	return true
}

func runQuorum(ctx context.Context, run *Run) (Verdict, error) {
	v := Verdict{Figures: map[string]float64{}}
	cl := run.Cluster()
	members := cl.Members()
	rs, err := run.newReplicas(run.Params.Replicas)
	if err != nil {
		return v, err
	}
	if err := run.Phase(ctx, "3 members up; r1 is elected and renews its lease"); err != nil {
		return v, err
	}
	if err := startFirstOwner(ctx, run, rs, leaderLoop("election/", 250*time.Millisecond, true), "election/"); err != nil {
		return v, err
	}
	lead, err := cl.Leader()
	if err != nil {
		return v, err
	}
	run.Emit(Event{Kind: LeaderObserved, Text: "raft leader is " + members[lead].Name})
	report := func(label string, d time.Duration) bool {
		start := time.Now()
		ok := probe(ctx, run, d)
		if ok {
			run.Note("%s: a write and a lease grant went through in %s", label, time.Since(start).Round(time.Millisecond))
		} else {
			run.Note("%s: a write and a lease grant did not complete within %s: stalled", label, d)
		}
		return ok
	}
	all := report("3 of 3 up", 2*time.Second)

	follower := (lead + 1) % len(members)
	if err := run.Phase(ctx, fmt.Sprintf("stop %s (a follower): 2 of 3 left, still a majority", members[follower].Name)); err != nil {
		return v, err
	}
	if err := run.stopMember(members[follower]); err != nil {
		return v, err
	}
	one := report("2 of 3 up", 3*time.Second)

	if err := run.Phase(ctx, fmt.Sprintf("stop %s (the leader): 1 of 3 left, no majority", members[lead].Name)); err != nil {
		return v, err
	}
	if err := run.stopMember(members[lead]); err != nil {
		return v, err
	}
	two := report("1 of 3 up", time.Second)
	if err := sleep(ctx, run.tTLDuration()); err != nil {
		return v, err
	}
	two = two || report("1 of 3 up, again", time.Second)

	if err := run.Phase(ctx, fmt.Sprintf("restart %s: 2 of 3 up again", members[lead].Name)); err != nil {
		return v, err
	}
	restart := time.Now()
	if err := run.restartMember(ctx, members[lead]); err != nil {
		return v, err
	}
	back := waitFor(ctx, 5*time.Second, func() bool { return probe(ctx, run, time.Second) })
	if back {
		run.Note("writes and grants work again %s after the restart began", time.Since(restart).Round(10*time.Millisecond))
	}
	owner := waitFor(ctx, run.tTLDuration()+5*time.Second, func() bool { return anyOwner(rs) })
	if owner {
		run.Note("an owner is elected again")
	}
	if err := run.restartMember(ctx, members[follower]); err != nil {
		return v, err
	}

	v.Figures["ok_3_of_3"], v.Figures["ok_2_of_3"] = boolValue(all), boolValue(one)
	v.Figures["ok_1_of_3"], v.Figures["ok_after_restart"] = boolValue(two), boolValue(back)
	v.Showed = all && one && !two && back
	v.Summary = fmt.Sprintf("Writes and lease grants: 3 of 3 up %s, 2 of 3 up %s, 1 of 3 up %s, after a restart %s.", works(all), works(one), works(two), works(back))
	if !v.Showed {
		v.Summary = "Unexpected: " + v.Summary
	}
	return v, nil
}

func works(ok bool) string {
	if ok {
		return "worked"
	}
	return "stalled"
}
