package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// fencingScenario is the scenario fencing.
var fencingScenario = &Scenario{
	Name:            "fencing",
	Resource:        true,
	Title:           "A zombie owner's late write, with and without fencing",
	Summary:         "The owner is paused past its TTL, another replica takes over and writes, then the old owner wakes and writes with its old token. With fencing off the resource takes the stale write and loses the new owner's data; with fencing on it refuses it.",
	Faults:          "pause the owner past its TTL",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runFencing,
}

func runFencing(ctx context.Context, run *Run) (Verdict, error) {
	v := Verdict{Showed: true, Figures: map[string]float64{}}
	var parts []string
	for i, fencing := range variants(run.Params.Fencing) {
		accepted, detail, err := fencingVariant(ctx, run, fencing, i)
		if err != nil {
			return v, err
		}
		if fencing {
			v.Figures["stale_rejected_fencing_on"] = boolValue(!accepted)
			v.Showed = v.Showed && !accepted
		} else {
			v.Figures["stale_accepted_fencing_off"] = boolValue(accepted)
			v.Showed = v.Showed && accepted
		}
		parts = append(parts, detail)
	}
	v.Summary = joinSentences(parts)
	if !v.Showed {
		v.Summary = "Unexpected outcome: " + v.Summary
	}
	return v, nil
}

// fencingVariant runs the zombie story once; it reports whether the
// zombie's stale write was accepted.
func fencingVariant(ctx context.Context, run *Run, fencing bool, round int) (bool, string, error) {
	run.resetMonitor()
	res := run.NewResource(fencing)
	prefix := fmt.Sprintf("election-%d/", round)
	if err := run.Phase(ctx, fmt.Sprintf("fencing %s: replicas elect an owner that writes every 100 ms with its token", onOff(fencing))); err != nil {
		return false, "", err
	}
	rs := make([]*Replica, run.Params.Replicas)
	for i := range rs {
		r, err := run.newReplica(fmt.Sprintf("%c%d", 'a'+round, i+1))
		if err != nil {
			return false, "", err
		}
		rs[i] = r
	}
	zombie := rs[0]
	// No local lease check: the owner writes first and looks afterwards.
	if err := zombie.Start(leaderLoop(prefix, 100*time.Millisecond, false)); err != nil {
		return false, "", err
	}
	if !waitFor(ctx, 3*time.Second, func() bool { return zombie.State().Role == RoleOwner }) {
		return false, "", errors.New("the first replica never became owner")
	}
	for _, r := range rs[1:] {
		if err := r.Start(leaderLoop(prefix, 100*time.Millisecond, false)); err != nil {
			return false, "", err
		}
	}
	if !waitQueue(ctx, run, prefix, len(rs)) {
		return false, "", errors.New("the replicas never all joined the election")
	}
	oldToken := zombie.State().Token

	if err := run.Phase(ctx, fmt.Sprintf("pause owner %s (token %d) past its TTL", zombie.Name, oldToken)); err != nil {
		return false, "", err
	}
	if err := run.awaitAny(ctx, rs[1:], "take over from the paused owner"); err != nil {
		return false, "", err
	}
	zombie.pause(ByScript)
	var successor *Replica
	waitFor(ctx, run.tTLDuration()+3*time.Second, func() bool {
		for _, r := range rs[1:] {
			if r.State().Role == RoleOwner {
				successor = r
				return true
			}
		}
		return false
	})
	if successor == nil {
		return false, "", errors.New("nobody took over from the paused owner")
	}
	newToken := successor.State().Token
	// Let the new owner write before the zombie wakes.
	waitFor(ctx, 2*time.Second, func() bool { return res.State().Highest >= newToken })
	before := res.State()

	if err := run.Phase(ctx, fmt.Sprintf("wake %s: it writes with its old token %d", zombie.Name, oldToken)); err != nil {
		return false, "", err
	}
	zombie.resume(ByScript)
	waitFor(ctx, 2*time.Second, func() bool { return zombie.State().Role != RoleOwner })
	after := res.State()
	accepted := after.Accepted > before.Accepted && after.Writer == zombie.Name ||
		staleAccepted(run, zombie.Name, oldToken)
	if err := run.Phase(ctx, fmt.Sprintf("fencing %s is over: the replicas retire", onOff(fencing))); err != nil {
		return false, "", err
	}
	for _, r := range rs {
		r.retire()
	}
	if accepted {
		return true, fmt.Sprintf("fencing off: %s's write with token %d was accepted after token %d, overwriting %s's data", zombie.Name, oldToken, newToken, successor.Name), nil
	}
	return false, fmt.Sprintf("fencing on: %s's write with token %d was rejected (the resource had seen %d) and %s's data survived", zombie.Name, oldToken, newToken, successor.Name), nil
}

// staleAccepted looks through the events for an accepted write by who
// carrying token.
func staleAccepted(run *Run, who string, token int64) bool {
	for _, e := range run.Events(0) {
		if e.Kind == InvariantViolated && e.Replica == who && e.Token == token {
			return true
		}
	}
	return false
}
