package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// fencingScenario is the scenario fencing.
var fencingScenario = &experiment.Scenario{
	Name:            "fencing",
	Resource:        true,
	Title:           "A zombie owner's late write, with and without fencing",
	Summary:         "The owner writes to a resource every 100 ms with its token; it is paused past its TTL while another replica takes over and writes, then it wakes. Once with the resource checking tokens (fencing), once without.",
	Faults:          "pause the owner past its TTL",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runFencing,
	Predict:    fencingQuestion,
	Shows: []history.Property{
		{Name: "stale-write-taken", Part: fencingPart(false), Check: staleWriteTaken, When: func(p history.Params) bool { return runs(p.Fencing, false) }},
		{Name: "stale-write-refused", Part: fencingPart(true), Check: staleWriteRefused, When: func(p history.Params) bool { return runs(p.Fencing, true) }},
	},
}

func runFencing(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	for i, fencing := range variants(run.Params.Fencing) {
		if err := fencingVariant(ctx, run, fencing, i); err != nil {
			return history.Verdict{}, err
		}
	}
	return history.Verdict{}, nil
}

func fencingPart(on bool) string { return "fencing " + onOff(on) }

// staleWriteTaken: with fencing off the resource takes the zombie's write.
func staleWriteTaken(f *history.Findings) (bool, string) {
	for _, w := range f.Stale {
		if w.Accepted {
			return true, fmt.Sprintf("with fencing off the resource took %s's write with token %d after token %d was issued: the new owner's data was overwritten", w.Replica, w.Token, w.Issued)
		}
	}
	return false, "with fencing off no stale write was accepted: " + zombieStory(f)
}

// staleWriteRefused: with fencing on the resource refuses it.
func staleWriteRefused(f *history.Findings) (bool, string) {
	var refused *history.StaleWrite
	for i, w := range f.Stale {
		if w.Accepted {
			return false, fmt.Sprintf("with fencing on the resource still took %s's write with token %d after token %d", w.Replica, w.Token, w.Issued)
		}
		if refused == nil {
			refused = &f.Stale[i]
		}
	}
	if refused == nil {
		return false, "with fencing on no stale write reached the resource: " + zombieStory(f)
	}
	return true, fmt.Sprintf("with fencing on the resource refused %s's write with token %d (it had seen %d), and the new owner's data survived", refused.Replica, refused.Token, refused.Issued)
}

// zombieStory says what the first owner did after its pause, from the
// history: why it sent no stale write.
func zombieStory(f *history.Findings) string {
	first, ok := f.FirstEvent(history.KindIs(history.Acquired, ""))
	if !ok {
		return "nobody became owner"
	}
	z := first.Replica
	if _, ok := f.FirstEvent(func(e history.Event) bool { return e.Kind == history.Acquired && e.Replica != z }); !ok {
		return fmt.Sprintf("nobody took over from %s, so its token %d stayed the newest", z, first.Token)
	}
	woke, ok := f.FirstEvent(history.KindIs(history.Resumed, z))
	if !ok {
		return fmt.Sprintf("%s never woke up", z)
	}
	for _, e := range f.Events {
		if e.At < woke.At || e.Replica != z {
			continue
		}
		switch e.Kind {
		case history.Lost, history.SteppedDown, history.LeaseExpired:
			return fmt.Sprintf("%s woke and learned first (%s), so it never wrote with its old token", z, e.Text)
		case history.WriteAccepted, history.WriteRejected:
			return fmt.Sprintf("%s's first write after waking carried token %d, not a stale one", z, e.Token)
		}
	}
	return fmt.Sprintf("%s woke but did nothing as owner before the part ended", z)
}

// fencingVariant runs the zombie story once; it reports whether the
// zombie's stale write was accepted.
func fencingVariant(ctx context.Context, run *experiment.Run, fencing bool, round int) error {
	run.Part(fencingPart(fencing))
	run.ResetMonitor()
	res := run.NewResource(fencing)
	prefix := fmt.Sprintf("election-%d/", round)
	if err := run.Phase(ctx, fmt.Sprintf("fencing %s: replicas elect an owner that writes every 100 ms with its token", onOff(fencing))); err != nil {
		return err
	}
	rs := make([]*experiment.Replica, run.Params.Replicas)
	for i := range rs {
		r, err := run.NewReplica(fmt.Sprintf("%c%d", 'a'+round, i+1))
		if err != nil {
			return err
		}
		rs[i] = r
	}
	zombie := rs[0]
	// No local lease check: the owner writes first and looks afterwards.
	if err := zombie.Start(leaderLoop(prefix, 100*time.Millisecond, false)); err != nil {
		return err
	}
	if !experiment.WaitFor(ctx, 3*time.Second, func() bool { return zombie.State().Role == experiment.RoleOwner }) {
		return errors.New("the first replica never became owner")
	}
	for _, r := range rs[1:] {
		if err := r.Start(leaderLoop(prefix, 100*time.Millisecond, false)); err != nil {
			return err
		}
	}
	if !waitQueue(ctx, run, prefix, len(rs)) {
		return errors.New("the replicas never all joined the election")
	}
	oldToken := zombie.State().Token

	if err := run.Phase(ctx, fmt.Sprintf("pause owner %s (token %d) past its TTL", zombie.Name, oldToken)); err != nil {
		return err
	}
	if err := run.AwaitAny(ctx, rs[1:], "take over from the paused owner"); err != nil {
		return err
	}
	zombie.Pause(history.ByScript)
	var successor *experiment.Replica
	experiment.WaitFor(ctx, run.TTLDuration()+3*time.Second, func() bool {
		for _, r := range rs[1:] {
			if r.State().Role == experiment.RoleOwner {
				successor = r
				return true
			}
		}
		return false
	})
	if successor == nil {
		return errors.New("nobody took over from the paused owner")
	}
	newToken := successor.State().Token
	// Let the new owner write before the zombie wakes.
	experiment.WaitFor(ctx, 2*time.Second, func() bool { return res.State().Highest >= newToken })

	if err := run.Phase(ctx, fmt.Sprintf("wake %s: it writes with its old token %d", zombie.Name, oldToken)); err != nil {
		return err
	}
	zombie.Resume(history.ByScript)
	experiment.WaitFor(ctx, 2*time.Second, func() bool { return zombie.State().Role != experiment.RoleOwner })
	if err := run.Phase(ctx, fmt.Sprintf("fencing %s is over: the replicas retire", onOff(fencing))); err != nil {
		return err
	}
	for _, r := range rs {
		r.Retire()
	}
	return nil
}
