package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// renewalScenario is the scenario renewal.
var renewalScenario = &experiment.Scenario{
	Name:            "renewal",
	Resource:        true,
	Title:           "Renewing a lease on three schedules, and after a pause",
	Summary:         "A replica renews a lease on three schedules: every TTL/2, every TTL/3, every 2 x TTL. Then an elected owner that renews every TTL/3 is paused for twice its TTL, and wakes.",
	Faults:          "renew late; pause the owner past its TTL",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runRenewal,
	Predict:    renewalQuestion,
	Shows: []history.Property{
		{Name: "lease-lived", Part: renewalCases[0].part, Check: leaseLived},
		{Name: "lease-lived", Part: renewalCases[1].part, Check: leaseLived},
		{Name: "lease-died", Part: renewalCases[2].part, Check: leaseDied},
		{Name: "paused-owner-replaced", Part: pausedOwnerPart, Check: pausedOwnerReplaced},
	},
}

// renewalCases are the schedules the first part tries.
var renewalCases = []struct {
	part  string
	every func(ttl time.Duration) time.Duration
}{
	{"renew every TTL/2", func(ttl time.Duration) time.Duration { return ttl / 2 }},
	{"renew every TTL/3", func(ttl time.Duration) time.Duration { return ttl / 3 }},
	{"renew every 2 x TTL", func(ttl time.Duration) time.Duration { return 2 * ttl }},
}

const pausedOwnerPart = "pause the owner"

func runRenewal(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	rs, err := run.NewReplicas(run.Params.Replicas)
	if err != nil {
		return history.Verdict{}, fmt.Errorf("set up: %w", err)
	}
	ttl := run.TTLDuration()
	for _, c := range renewalCases {
		run.Part(c.part)
		every := c.every(ttl)
		if err := run.Phase(ctx, fmt.Sprintf("r1 takes a lease (%s) and renews it every %s", history.TTLLabel(run.TTL()), every)); err != nil {
			return history.Verdict{}, err
		}
		alive, margin, err := renewEvery(ctx, rs[0], run.TTL(), every, 3)
		if err != nil {
			return history.Verdict{}, fmt.Errorf("%s: %w", c.part, err)
		}
		if alive {
			run.Figure("margin_"+c.part[len("renew every "):]+"_s", margin.Seconds(), "s", fmt.Sprintf("every %s: 3 renewals answered; least time left before a renewal %.2fs", every, margin.Seconds()))
		}
	}
	run.Part(pausedOwnerPart)
	if err := pauseTheOwner(ctx, run, rs); err != nil {
		return history.Verdict{}, fmt.Errorf("%s: %w", pausedOwnerPart, err)
	}
	return history.Verdict{}, nil
}

// pauseTheOwner elects r1, pauses it for twice its TTL and wakes it.
func pauseTheOwner(ctx context.Context, run *experiment.Run, rs []*experiment.Replica) error {
	if err := run.Phase(ctx, "an elected owner renews every TTL/3; then it is paused for twice its TTL"); err != nil {
		return err
	}
	for _, r := range rs {
		if err := r.Start(leaderLoop("election/", 300*time.Millisecond, true)); err != nil {
			return err
		}
		if r == rs[0] && !experiment.WaitFor(ctx, 3*time.Second, func() bool { return r.State().Role == experiment.RoleOwner }) {
			return errors.New("r1 never became owner")
		}
	}
	if !waitQueue(ctx, run, "election/", len(rs)) {
		return errors.New("the replicas never all joined the election")
	}
	pause := 2*run.TTLDuration() + 500*time.Millisecond
	if err := run.AwaitAny(ctx, rs[1:], "take over from the paused owner"); err != nil {
		return err
	}
	rs[0].Pause(history.ByScript)
	if err := experiment.Sleep(ctx, pause); err != nil {
		return err
	}
	rs[0].Resume(history.ByScript)
	experiment.WaitFor(ctx, 2*time.Second, func() bool { return rs[0].State().Role != experiment.RoleOwner })
	return nil
}

// leaseLived: every renewal of the part was answered by etcd. One that
// etcd answered only after the replica's own deadline had passed (a
// leader election held it up) still counts: etcd's answer is what says
// whether the lease lived, and the summary says how late it was.
func leaseLived(f *history.Findings) (bool, string) {
	n, late, lost := renewals(f)
	if lost != "" {
		return false, fmt.Sprintf("%s: after %d answered renewal(s), %s", f.Part, n, lost)
	}
	if n < 3 {
		return false, fmt.Sprintf("%s: only %d renewal(s) answered before the part ended", f.Part, n)
	}
	say := fmt.Sprintf("%s: %d renewals answered, the lease lived", f.Part, n)
	if late != nil {
		say += fmt.Sprintf(" (etcd answered one %.2fs after %s's own deadline had passed", late.Facts.Overdue, late.Replica)
		if late.Facts.Tries > 1 {
			say += fmt.Sprintf(", on try %d; the try before met: %s", late.Facts.Tries, late.Facts.Err)
		}
		say += ")"
	}
	return true, say
}

// leaseDied: a renewal came after the lease was gone and was refused.
func leaseDied(f *history.Findings) (bool, string) {
	n, _, lost := renewals(f)
	if lost == "" {
		return false, fmt.Sprintf("%s: all %d renewals were answered, the lease outlived its TTL", f.Part, n)
	}
	return true, fmt.Sprintf("%s: too late, %s", f.Part, lost)
}

// renewals counts the renewals etcd answered in the part, the first
// that came after the replica's own deadline, and what ended the lease.
func renewals(f *history.Findings) (answered int, late *history.Event, lost string) {
	for i, e := range f.Events {
		switch e.Kind {
		case history.LeaseRenewed:
			answered++
			if late == nil && e.Facts != nil && e.Facts.Overdue > 0 {
				late = &f.Events[i]
			}
		case history.LeaseExpired:
			return answered, late, e.Text
		}
	}
	return answered, late, ""
}

// pausedOwnerReplaced: while the owner was paused another replica took
// over, and the owner stepped down when it woke.
func pausedOwnerReplaced(f *history.Findings) (bool, string) {
	p, ok := f.FirstEvent(history.KindIs(history.Paused, ""))
	if !ok {
		return false, "the owner was never paused"
	}
	w, woke := f.FirstEvent(history.KindIs(history.Resumed, p.Replica))
	next, took := f.FirstEvent(func(e history.Event) bool { return e.Kind == history.Acquired && e.At > p.At && (!woke || e.At < w.At) })
	if !took {
		return false, fmt.Sprintf("nobody took over while %s was paused", p.Replica)
	}
	say := fmt.Sprintf("while the owner %s was paused, %s took over %.2fs after the pause began", p.Replica, next.Replica, (next.At - p.At).Seconds())
	if !woke {
		return false, say + ", and " + p.Replica + " never woke"
	}
	down, ok := f.FirstEvent(func(e history.Event) bool {
		return e.Replica == p.Replica && e.At >= w.At && (e.Kind == history.Lost || e.Kind == history.SteppedDown)
	})
	if !ok {
		return false, say + ", but " + p.Replica + " still acted as owner after it woke"
	}
	return true, fmt.Sprintf("%s; %s woke and stepped down %.2fs later (%s)", say, p.Replica, (down.At - w.At).Seconds(), down.Text)
}

// renewEvery grants a lease and renews it n times, every interval. It
// reports whether every renewal was answered and the least time that was
// left on the lease just before a renewal.
func renewEvery(ctx context.Context, r *experiment.Replica, ttl int64, every time.Duration, n int) (bool, time.Duration, error) {
	if err := r.Await(ctx, "take a lease"); err != nil {
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
		if err := experiment.Sleep(ctx, r.RealDuration(every)); err != nil {
			return false, 0, err
		}
		if err := r.Await(ctx, "renew its lease"); err != nil {
			return false, 0, err
		}
		margin = min(margin, l.Left())
		if err := l.RenewAnswered(ctx); err != nil {
			if errors.Is(err, experiment.ErrLeaseGone) {
				return false, 0, nil
			}
			return false, 0, err
		}
	}
	l.Abandon(ctx)
	return true, margin, nil
}
