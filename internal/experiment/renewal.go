package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// renewalScenario is the scenario renewal.
var renewalScenario = &Scenario{
	Name:            "renewal",
	Resource:        true,
	Title:           "Renewing a lease: on time, too late, and after a pause",
	Summary:         "A lease renewed every TTL/2 or TTL/3 lives on; renewed later than its TTL it is gone and the renewal is refused. An owner paused longer than its TTL loses the lease, finds out when it wakes and steps down, while another replica already owns.",
	Faults:          "renew late; pause the owner past its TTL",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runRenewal,
}

func runRenewal(ctx context.Context, run *Run) (Verdict, error) {
	rs, err := run.newReplicas(run.Params.Replicas)
	if err != nil {
		return Verdict{}, err
	}
	ttl := run.tTLDuration()
	v := Verdict{Figures: map[string]float64{}}
	ok := true
	for _, c := range []struct {
		label string
		every time.Duration
		want  bool
	}{
		{"TTL/2", ttl / 2, true},
		{"TTL/3", ttl / 3, true},
		{"2 x TTL (too late)", 2 * ttl, false},
	} {
		if err := run.Phase(ctx, fmt.Sprintf("r1 renews its lease (%s) every %s (%s)", TTLLabel(run.TTL()), c.every, c.label)); err != nil {
			return v, err
		}
		alive, margin, err := renewEvery(ctx, rs[0], run.TTL(), c.every, 3)
		if err != nil {
			return v, err
		}
		if alive {
			run.measure(margin.Seconds(), "s", fmt.Sprintf("every %s: 3 renewals answered; least time left before a renewal %.2fs", c.label, margin.Seconds()))
			v.Figures["margin_"+c.label[:5]+"_s"] = margin.Seconds()
		}
		ok = ok && alive == c.want
	}

	if err := run.Phase(ctx, "an elected owner renews every TTL/3; now pause it for twice its TTL"); err != nil {
		return v, err
	}
	for _, r := range rs {
		if err := r.Start(leaderLoop("election/", 300*time.Millisecond, true)); err != nil {
			return v, err
		}
		if r == rs[0] && !waitFor(ctx, 3*time.Second, func() bool { return r.State().Role == RoleOwner }) {
			return v, errors.New("r1 never became owner")
		}
	}
	if !waitQueue(ctx, run, "election/", len(rs)) {
		return v, errors.New("the replicas never all joined the election")
	}
	pause := 2*ttl + 500*time.Millisecond
	if err := run.awaitAny(ctx, rs[1:], "take over from the paused owner"); err != nil {
		return v, err
	}
	rs[0].pause(ByScript)
	pausedAt := time.Now()
	takenOver := waitFor(ctx, pause, func() bool { return anyOwner(rs[1:]) })
	if err := sleep(ctx, pause-time.Since(pausedAt)); err != nil {
		return v, err
	}
	rs[0].resume(ByScript)
	steppedDown := waitFor(ctx, 2*time.Second, func() bool { return rs[0].State().Role != RoleOwner })
	v.Showed = ok && takenOver && steppedDown
	switch {
	case v.Showed:
		v.Summary = fmt.Sprintf("Renewing every TTL/2 and every TTL/3 kept the lease (%s) alive; renewing every 2 x TTL was refused because the lease had expired. The owner paused for %s lost its lease, another replica took over during the pause, and the owner stepped down when it woke.", TTLLabel(run.TTL()), 2*ttl+500*time.Millisecond)
	case !ok:
		v.Summary = "Unexpected: a renewal schedule did not behave as the TTL says it should."
	default:
		v.Summary = fmt.Sprintf("Unexpected: taken over during the pause: %v; stepped down after it: %v.", takenOver, steppedDown)
	}
	return v, nil
}

// renewEvery grants a lease and renews it n times, every interval. It
// reports whether every renewal was answered and the least time that was
// left on the lease just before a renewal.
func renewEvery(ctx context.Context, r *Replica, ttl int64, every time.Duration, n int) (bool, time.Duration, error) {
	if err := r.await(ctx, "take a lease"); err != nil {
		return false, 0, err
	}
	l, err := r.Grant(ctx, ttl, false)
	if err != nil {
		return false, 0, err
	}
	margin := time.Duration(ttl) * time.Second
	for range n {
		// The script renews on r's behalf: a pause held by the learner
		// stops it, and it says so.
		if err := sleep(ctx, r.realDuration(every)); err != nil {
			return false, 0, err
		}
		if err := r.await(ctx, "renew its lease"); err != nil {
			return false, 0, err
		}
		margin = min(margin, l.Left())
		if err := l.Renew(ctx); err != nil {
			if errors.Is(err, errLeaseGone) {
				return false, 0, nil
			}
			return false, 0, err
		}
	}
	l.abandon(ctx)
	return true, margin, nil
}
