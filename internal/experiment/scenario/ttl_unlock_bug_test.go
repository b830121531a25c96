package scenario

import (
	"context"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// TestUnlockBugWhenP2sLeaseIsGone is the case: P2's lease is gone
// before P1 unlocks (here revoked while the script waits at that step).
// The events must say what etcd answered, P1's delete found no key, and
// the verdict must not claim P1 deleted P2's lock.
func TestUnlockBugWhenP2sLeaseIsGone(t *testing.T) {
	srv, _ := etcds(t)
	naive := false
	run, err := Start(context.Background(), "ttl-unlock-bug", history.Params{Step: true, VersionedUnlock: &naive}, experiment.Env{Etcd: srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for revoked := false; ; {
		if !experiment.WaitFor(ctx, 30e9, func() bool { return run.AtStep() || isDone(run) }) {
			t.Fatal("the run neither reached a step nor ended")
		}
		if isDone(run) {
			break
		}
		if last := lastPhase(run); !revoked && strings.HasPrefix(last.Text, "P1 wakes up") {
			revokeLeaseOf(t, run, "p2")
			revoked = true
			if !experiment.WaitFor(ctx, 5e9, func() bool { return run.Replica("p2").State().Role != experiment.RoleOwner }) {
				t.Fatal("P2 never noticed its lease was gone")
			}
		}
		run.Step()
	}
	v, err := run.Wait()
	if err != nil {
		t.Fatal(err)
	}
	h := run.History()
	unlock, ok := history.Find(&h, naivePart).LastEvent(history.KindIs(history.Released, "p1"))
	if !ok || unlock.Facts == nil || unlock.Facts.Deleted != 0 {
		t.Fatalf("P1's unlock: %+v", unlock)
	}
	if strings.Contains(unlock.Text, "P2's lock") || !strings.Contains(unlock.Text, "deleted nothing") {
		t.Errorf("P1's unlock says %q though etcd deleted nothing", unlock.Text)
	}
	if v.Showed || strings.Contains(v.Sentence(), "two owners at once,") || !strings.Contains(v.Sentence(), "P2's lease was gone before P1 unlocked") {
		t.Errorf("verdict: showed %v: %s", v.Showed, v.Sentence())
	}
	checkTextsAgree(t, h.Events)
	t.Logf("verdict: %s", v.Sentence())
}

func isDone(run *experiment.Run) bool {
	select {
	case <-run.Done():
		return true
	default:
		return false
	}
}

func lastPhase(run *experiment.Run) history.Event {
	evs := run.Events(0)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == history.Phase {
			return evs[i]
		}
	}
	return history.Event{}
}

// revokeLeaseOf revokes the lease of the replica's last Acquired event,
// with the run's own client: the lease is gone, as if it had expired.
func revokeLeaseOf(t *testing.T, run *experiment.Run, replica string) {
	t.Helper()
	evs := run.Events(0)
	for i := len(evs) - 1; i >= 0; i-- {
		if e := evs[i]; e.Kind == history.Acquired && e.Replica == replica && e.Facts != nil {
			if _, err := run.Admin().Revoke(context.Background(), clientv3.LeaseID(e.Facts.Lease)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s never acquired", replica)
}
