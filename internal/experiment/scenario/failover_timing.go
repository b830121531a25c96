package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// failoverTimingScenario is the scenario failover-timing.
var failoverTimingScenario = &experiment.Scenario{
	Name:            "failover-timing",
	Resource:        true,
	Title:           "Failover after a crash, and an owner whose network stalls",
	Summary:         "Crash the elected owner and time the gap until the next one, for two TTLs. Then stall the live owner's network three times, for half, one and a half and two TTLs, while its work goes on.",
	Faults:          "crash the owner; stall its network",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runFailover,
	Predict:    failoverQuestion,
	Shows: []history.Property{
		{Name: "prompt-failover", Part: failoverPart(0), Check: promptFailover},
		{Name: "prompt-failover", Part: failoverPart(1), Check: promptFailover},
		{Name: "false-failovers", Part: jitterPart, Check: falseFailovers},
	},
}

// FailoverSlack is how much later than the TTL a failover may come and
// still count as prompt: etcd revokes expired leases in a loop every
// 500 ms, and the waiter then needs a watch event and a read.
const FailoverSlack = 800 * time.Millisecond

func runFailover(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	for i, ttl := range []int64{run.TTL(), run.TTL() + 1} {
		run.Part(failoverPart(i))
		if err := run.Phase(ctx, fmt.Sprintf("%s: elect an owner, then crash it", history.TTLLabel(ttl))); err != nil {
			return history.Verdict{}, err
		}
		gap, err := measureFailover(ctx, run, ttl, fmt.Sprintf("sweep-%d/", i), i)
		if err != nil {
			return history.Verdict{}, fmt.Errorf("failover with %s: %w", history.TTLLabel(ttl), err)
		}
		run.Figure(fmt.Sprintf("gap_ttl%d_s", ttl), gap.Seconds(), "s", fmt.Sprintf("%s: next owner %.2fs after the crash (%+.2fs against the TTL)", history.TTLLabel(ttl), gap.Seconds(), (gap-time.Duration(ttl)*time.Second).Seconds()))
	}
	run.Part(jitterPart)
	if err := jitterPhase(ctx, run); err != nil {
		return history.Verdict{}, fmt.Errorf("jitter: %w", err)
	}
	return history.Verdict{}, nil
}

const jitterPart = "network stalls"

func failoverPart(i int) string { return fmt.Sprintf("failover %d", i+1) }

// promptFailover: after the owner's crash etcd deletes its key within
// the TTL it was granted plus etcd's revoke loop, and no sooner than the
// TTL less a renewal interval (the lease ran from its last renewal); the
// next owner comes after that. How long the replicas then take to react
// is reported, not judged: on a loaded machine it is the machine's.
func promptFailover(f *history.Findings) (bool, string) {
	g, ok := gapAfterCrash(f)
	if !ok {
		if c, crashed := f.FirstEvent(history.KindIs(history.Crashed, "")); crashed {
			return false, fmt.Sprintf("nobody took over after %s crashed at %.1fs", c.Replica, c.At.Seconds())
		}
		return false, "no owner was crashed"
	}
	next, _ := f.FirstEvent(func(e history.Event) bool { return e.Kind == history.Acquired && e.At >= g.To })
	ttl := time.Duration(next.TTL) * time.Second
	say := fmt.Sprintf("with %s the next owner (%s) came %.2fs after %s crashed", history.TTLLabel(next.TTL), next.Replica, g.Length().Seconds(), g.Replica)
	del, deleted := f.FirstEvent(func(e history.Event) bool {
		return e.Kind == history.KeyChanged && e.Facts.Op == "delete" && e.At >= g.From && e.Facts.Key == termKey(f, g.Replica)
	})
	if !deleted {
		return false, say + ", but the watch never saw etcd delete the crashed owner's key"
	}
	// The run's watch and the next owner see the deletion each in its
	// own time; the earlier of the two is when etcd had deleted it.
	expiry := min(del.At, g.To) - g.From
	say += fmt.Sprintf(" (etcd had deleted its key %.2fs after the crash; the next owner acted %.2fs after the run's watch saw it)", expiry.Seconds(), max(0, g.To-del.At).Seconds())
	switch lo, hi := ttl*2/3-100*time.Millisecond, ttl+FailoverSlack; {
	case expiry > hi:
		return false, fmt.Sprintf("%s: etcd took more than the TTL plus %s", say, FailoverSlack)
	case expiry < lo:
		return false, say + ": sooner than the lease could have run out"
	}
	return true, say
}

// termKey is the key of the replica's last term in f ("" if none).
func termKey(f *history.Findings, replica string) string {
	key := ""
	for _, t := range f.Terms {
		if t.Replica == replica {
			key = t.Key
		}
	}
	return key
}

// falseFailovers: stalls of the live owner's network move ownership
// although nobody crashed.
func falseFailovers(f *history.Findings) (bool, string) {
	var stalls []string
	for _, e := range f.Faults {
		if e.Kind == history.Stalled {
			stalls = append(stalls, fmt.Sprintf("%.1fs", e.Value))
		}
	}
	moves := 0
	first, ok := f.FirstEvent(history.KindIs(history.Acquired, ""))
	for _, e := range f.Events {
		if ok && e.Kind == history.Acquired && e.At > first.At {
			moves++
		}
	}
	say := fmt.Sprintf("with the owner's network stalled for %s and nobody crashed, ownership moved %d time(s)", strings.Join(stalls, ", "), moves)
	return moves > 0, say
}

// measureFailover elects an owner among the run's replica count with the
// given TTL, crashes it and returns the time until another replica owns.
func measureFailover(ctx context.Context, run *experiment.Run, ttl int64, prefix string, round int) (time.Duration, error) {
	rs := make([]*experiment.Replica, run.Params.Replicas)
	for i := range rs {
		r, err := run.NewReplica(fmt.Sprintf("%c%d", 'a'+round%26, i+1))
		if err != nil {
			return 0, err
		}
		rs[i] = r
	}
	defer func() {
		for _, r := range rs {
			r.Retire()
		}
	}()
	body := leaderLoopTTL(prefix, 200*time.Millisecond, true, ttl)
	if err := startFirstOwner(ctx, run, rs, body, prefix); err != nil {
		return 0, err
	}
	if err := run.AwaitAny(ctx, rs[1:], "take over from the crashed owner"); err != nil {
		return 0, err
	}
	rs[0].Crash(history.ByScript)
	crashed := time.Now()
	if !experiment.WaitFor(ctx, time.Duration(ttl)*time.Second+5*time.Second, func() bool { return anyOwner(rs[1:]) }) {
		return 0, errors.New("nobody took over after the crash")
	}
	return time.Since(crashed), nil
}

// startFirstOwner starts rs[0] and waits until it owns, then starts the
// rest and waits until all are queued.
func startFirstOwner(ctx context.Context, run *experiment.Run, rs []*experiment.Replica, body experiment.Body, prefix string) error {
	if err := rs[0].Start(body); err != nil {
		return err
	}
	if !experiment.WaitFor(ctx, 3*time.Second, func() bool { return rs[0].State().Role == experiment.RoleOwner }) {
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
func jitterPhase(ctx context.Context, run *experiment.Run) error {
	if err := run.Phase(ctx, fmt.Sprintf("%s: stall the owner's network three times (its work goes on)", history.TTLLabel(run.TTL()))); err != nil {
		return err
	}
	rs := make([]*experiment.Replica, run.Params.Replicas)
	for i := range rs {
		r, err := run.NewReplica(fmt.Sprintf("j%d", i+1))
		if err != nil {
			return err
		}
		rs[i] = r
	}
	defer func() {
		for _, r := range rs {
			r.Retire()
		}
	}()
	if err := startFirstOwner(ctx, run, rs, leaderLoop("jitter/", 200*time.Millisecond, true), "jitter/"); err != nil {
		return err
	}
	ttl := run.TTLDuration()
	stalls := []time.Duration{ttl / 2, ttl * 3 / 2, ttl * 2}
	for i := len(stalls) - 1; i > 0; i-- {
		j := run.Intn(i + 1)
		stalls[i], stalls[j] = stalls[j], stalls[i]
	}
	for _, d := range stalls {
		owner := currentOwner(rs)
		if owner == nil {
			experiment.WaitFor(ctx, ttl+2*time.Second, func() bool { return currentOwner(rs) != nil })
			owner = currentOwner(rs)
		}
		if owner == nil {
			return errors.New("no owner to stall")
		}
		owner.Stall(ctx, d)
		owner.Emit(history.Event{Kind: history.Note, Text: "network flows again"})
		if err := experiment.Sleep(ctx, ttl/2+500*time.Millisecond); err != nil {
			return err
		}
	}
	experiment.WaitFor(ctx, ttl+time.Second, func() bool { return currentOwner(rs) != nil })
	return nil
}

func currentOwner(rs []*experiment.Replica) *experiment.Replica {
	for _, r := range rs {
		if r.State().Role == experiment.RoleOwner {
			return r
		}
	}
	return nil
}
