package scenario

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// TestReplicaFaults drives the faults the screen offers on a live
// election: partition, heal, slow clock, crash and restart.
func TestReplicaFaults(t *testing.T) {
	srv, _ := etcds(t)
	sc := &experiment.Scenario{Name: "faults-test", DefaultReplicas: 2, DefaultTTL: 1,
		Run: func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
			rs, err := run.NewReplicas(2)
			if err != nil {
				return history.Verdict{}, err
			}
			body := leaderLoop("election/", 100*time.Millisecond, true)
			if err := startFirstOwner(ctx, run, rs, body, "election/"); err != nil {
				return history.Verdict{}, err
			}
			a, b := rs[0], rs[1]
			owner := func(r *experiment.Replica) func() bool {
				return func() bool { return r.State().Role == experiment.RoleOwner }
			}
			a.Partition(history.ByLearner)
			if !experiment.WaitFor(ctx, 4*time.Second, owner(b)) {
				return history.Verdict{}, errors.New("partitioned owner was not replaced")
			}
			if a.State().Role == experiment.RoleOwner {
				return history.Verdict{}, errors.New("partitioned owner still believes it owns")
			}
			a.Heal(history.ByLearner)
			b.SetClockRate(0.5, history.ByLearner)
			if got := b.State().ClockRate; got != 0.5 {
				return history.Verdict{}, errors.New("clock rate not recorded")
			}
			b.Crash(history.ByLearner)
			if !b.State().Crashed {
				return history.Verdict{}, errors.New("crash not recorded")
			}
			if !experiment.WaitFor(ctx, 5*time.Second, owner(a)) {
				return history.Verdict{}, errors.New("healed replica did not take over from the crashed one")
			}
			if err := b.Restart(history.ByLearner); err != nil {
				return history.Verdict{}, err
			}
			if !waitQueue(ctx, run, "election/", 2) {
				return history.Verdict{}, errors.New("restarted replica did not rejoin the election")
			}
			return history.Verdict{Showed: true}, nil
		}}
	run, err := experiment.Start(context.Background(), sc, history.Params{}, experiment.Env{Etcd: srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := run.Wait()
	if err != nil || !v.Showed {
		t.Fatalf("%v", err)
	}
	select {
	case <-run.Updated():
	default:
		t.Error("Updated never signalled new events")
	}
	h := run.History()
	if h.Verdict == nil || h.Scenario != "faults-test" || h.Params.Seed != 1 || h.Timing.GrantedTTL != 1 {
		t.Errorf("history header %+v", h)
	}
	kinds := map[history.Kind]bool{}
	for _, e := range h.Events {
		kinds[e.Kind] = true
		if e.Kind.IsFault() && e.Origin != history.ByLearner {
			t.Errorf("fault %s by %q, want the learner's (exported call)", e.Kind, e.Origin)
		}
	}
	if !kinds[history.KeyChanged] {
		t.Error("the key watch recorded nothing")
	}
	for _, k := range []history.Kind{history.Partitioned, history.Healed, history.ClockChanged, history.Crashed, history.Restarted, history.SteppedDown} {
		if !kinds[k] {
			t.Errorf("no %s event", k)
		}
	}
}
