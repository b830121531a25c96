package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// failoverTimingScenario is the scenario failover-timing.
var failoverTimingScenario = &Scenario{
	Name:            "failover-timing",
	Resource:        true,
	Title:           "How long failover takes, and flapping under jitter",
	Summary:         "Kill the owner and time the gap until the next one, for two TTLs: about TTL plus etcd's half-second revoke loop. Then stall the owner's network now and then: stalls near the TTL cost it the lease, a failover nobody needed.",
	Faults:          "crash the owner; stall its network",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runFailover,
}

// FailoverSlack is how much later than the TTL a failover may come and
// still count as prompt: etcd revokes expired leases in a loop every
// 500 ms, and the waiter then needs a watch event and a read.
const FailoverSlack = 800 * time.Millisecond

func runFailover(ctx context.Context, run *Run) (Verdict, error) {
	v := Verdict{Showed: true, Figures: map[string]float64{}}
	var parts []string
	for i, ttl := range []int64{run.TTL(), run.TTL() + 1} {
		if err := run.Phase(ctx, fmt.Sprintf("%s: elect an owner, then crash it", TTLLabel(ttl))); err != nil {
			return v, err
		}
		gap, err := measureFailover(ctx, run, ttl, fmt.Sprintf("sweep-%d/", i), i)
		if err != nil {
			return v, err
		}
		run.measure(gap.Seconds(), "s", fmt.Sprintf("%s: next owner %.2fs after the crash (%.2fs over the TTL)", TTLLabel(ttl), gap.Seconds(), (gap-time.Duration(ttl)*time.Second).Seconds()))
		v.Figures[fmt.Sprintf("gap_ttl%d_s", ttl)] = gap.Seconds()
		within := gap <= time.Duration(ttl)*time.Second+FailoverSlack
		v.Showed = v.Showed && within && gap >= time.Duration(ttl)*time.Second-300*time.Millisecond
		parts = append(parts, fmt.Sprintf("%s: failover after %.2fs", TTLLabel(ttl), gap.Seconds()))
	}

	flaps, long, err := jitterPhase(ctx, run)
	if err != nil {
		return v, err
	}
	v.Figures["false_failovers"] = float64(flaps)
	v.Showed = v.Showed && flaps > 0
	parts = append(parts, fmt.Sprintf("with network stalls on a live owner (%d of 3 longer than the TTL), %d false failover(s)", long, flaps))
	v.Summary = joinSentences(parts)
	if !v.Showed {
		v.Summary = "Unexpected: " + v.Summary
	}
	return v, nil
}

// measureFailover elects an owner among the run's replica count with the
// given TTL, crashes it and returns the time until another replica owns.
func measureFailover(ctx context.Context, run *Run, ttl int64, prefix string, round int) (time.Duration, error) {
	rs := make([]*Replica, run.Params.Replicas)
	for i := range rs {
		r, err := run.newReplica(fmt.Sprintf("%c%d", 'a'+round%26, i+1))
		if err != nil {
			return 0, err
		}
		rs[i] = r
	}
	defer func() {
		for _, r := range rs {
			r.retire()
		}
	}()
	body := leaderLoopTTL(prefix, 200*time.Millisecond, true, ttl)
	if err := startFirstOwner(ctx, run, rs, body, prefix); err != nil {
		return 0, err
	}
	if err := run.awaitAny(ctx, rs[1:], "take over from the crashed owner"); err != nil {
		return 0, err
	}
	rs[0].crash(ByScript)
	crashed := time.Now()
	if !waitFor(ctx, time.Duration(ttl)*time.Second+5*time.Second, func() bool { return anyOwner(rs[1:]) }) {
		return 0, errors.New("nobody took over after the crash")
	}
	return time.Since(crashed), nil
}

// startFirstOwner starts rs[0] and waits until it owns, then starts the
// rest and waits until all are queued.
func startFirstOwner(ctx context.Context, run *Run, rs []*Replica, body Body, prefix string) error {
	if err := rs[0].Start(body); err != nil {
		return err
	}
	if !waitFor(ctx, 3*time.Second, func() bool { return rs[0].State().Role == RoleOwner }) {
		return fmt.Errorf("%s never became owner", rs[0].Name)
	}
	for _, r := range rs[1:] {
		if err := r.Start(body); err != nil {
			return err
		}
	}
	if !waitQueue(ctx, run, prefix, len(rs)) {
		return errors.New("the replicas never all joined the election")
	}
	return nil
}

// jitterPhase stalls the current owner's network three times and counts
// how often ownership moved although nobody crashed.
func jitterPhase(ctx context.Context, run *Run) (flaps, long int, err error) {
	if err := run.Phase(ctx, fmt.Sprintf("%s: stall the owner's network three times (its work goes on)", TTLLabel(run.TTL()))); err != nil {
		return 0, 0, err
	}
	rs := make([]*Replica, run.Params.Replicas)
	for i := range rs {
		r, err := run.newReplica(fmt.Sprintf("j%d", i+1))
		if err != nil {
			return 0, 0, err
		}
		rs[i] = r
	}
	defer func() {
		for _, r := range rs {
			r.retire()
		}
	}()
	if err := startFirstOwner(ctx, run, rs, leaderLoop("jitter/", 200*time.Millisecond, true), "jitter/"); err != nil {
		return 0, 0, err
	}
	ttl := run.tTLDuration()
	stalls := []time.Duration{ttl / 2, ttl * 3 / 2, ttl * 2}
	for i := len(stalls) - 1; i > 0; i-- {
		j := run.Intn(i + 1)
		stalls[i], stalls[j] = stalls[j], stalls[i]
	}
	start := len(run.Events(0))
	for _, d := range stalls {
		owner := currentOwner(rs)
		if owner == nil {
			waitFor(ctx, ttl+2*time.Second, func() bool { return currentOwner(rs) != nil })
			owner = currentOwner(rs)
		}
		if owner == nil {
			return 0, 0, errors.New("no owner to stall")
		}
		if d > ttl {
			long++
		}
		owner.stall(ctx, d)
		owner.Emit(Event{Kind: Note, Text: "network flows again"})
		if err := sleep(ctx, ttl/2+500*time.Millisecond); err != nil {
			return 0, 0, err
		}
	}
	waitFor(ctx, ttl+time.Second, func() bool { return currentOwner(rs) != nil })
	for _, e := range run.Events(start) {
		if e.Kind == Acquired {
			flaps++
		}
	}
	return flaps, long, nil
}

func currentOwner(rs []*Replica) *Replica {
	for _, r := range rs {
		if r.State().Role == RoleOwner {
			return r
		}
	}
	return nil
}
