package scenario

import (
	"context"
	"strings"
	"testing"
	"time"

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
		if next := run.PendingStep(); !revoked && strings.HasPrefix(next, "P1 wakes up") {
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

// naiveUnlockHistory is a naive part written by hand: P1 takes the lock
// (revision 2) and is paused, etcd deletes its key (3), P2 takes the
// lock (4); then what the learner did (extra) and what P1's unlock found
// (unlock), and P3 takes the free lock (6).
func naiveUnlockHistory(extra []history.Event, unlock history.Event) history.History {
	naive := false
	k := func(v string, rev int64) history.StoreKey {
		return history.StoreKey{Key: "lock-naive", Value: v, CreateRevision: rev, ModRevision: rev, Version: 1, Lease: rev}
	}
	put := func(at time.Duration, v string, rev int64) history.Event {
		held := k(v, rev)
		return history.Event{At: at, Kind: history.KeyChanged, Facts: &history.Facts{Op: "put", Key: "lock-naive", Revision: rev, Succeeded: true, Held: &held}}
	}
	evs := []history.Event{
		{Kind: history.PartBegins, Text: naivePart},
		{At: time.Second, Kind: history.Phase, Step: 1, Text: "P1 takes the lock"},
		put(time.Second, "p1", 2),
		{At: time.Second, Kind: history.Acquired, Replica: "p1", Token: 2},
		{At: time.Second, Kind: history.Paused, Replica: "p1", Origin: history.ByScript},
		{At: 2 * time.Second, Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: "lock-naive", Revision: 3, Succeeded: true, Deleted: 1, Prev: []history.StoreKey{k("p1", 2)}}},
		{At: 3 * time.Second, Kind: history.Phase, Step: 2, Text: "P2 takes the free lock"},
		put(3*time.Second, "p2", 4),
		{At: 3 * time.Second, Kind: history.Acquired, Replica: "p2", Token: 4},
		{At: 5 * time.Second, Kind: history.Phase, Step: 3, Text: "P1 wakes up and unlocks"},
		{At: 5 * time.Second, Kind: history.Resumed, Replica: "p1", Origin: history.ByScript},
	}
	evs = append(evs, extra...)
	unlock.Kind, unlock.Replica = history.Released, "p1"
	unlock.Text = unlockText(unlock.Facts, 2)
	evs = append(evs, unlock,
		history.Event{At: 12 * time.Second, Kind: history.Phase, Step: 4, Text: "P3 tries the lock"},
		put(12*time.Second, "p3", 6),
		history.Event{At: 12 * time.Second, Kind: history.Acquired, Replica: "p3", Token: 6})
	return history.History{Format: history.HistoryFormat, Scenario: "ttl-unlock-bug", Params: history.Params{Replicas: 3, TTL: 1, VersionedUnlock: &naive}, Events: evs}
}

// TestUnlockBugJudgedByWhatHappened: the verdict and the prediction are
// judged from what the history holds, when a fault of the learner's kept
// the effect from showing. P2 crashed by the learner: P1's unlock did
// delete P2's key (the watch reported that delete before the unlock's
// answer was recorded, which once read as "etcd had already deleted P2's
// key before P1 unlocked"), and no second owner came of it because P2 no
// longer believed it held the lock; the pick stays judged, as P3's answer
// came from the unlock. P2 paused by the learner until etcd deleted its
// key: the verdict says so, with the learner's key, and the pick is not
// judged (it was marked right): P3's answer says nothing about the unlock.
func TestUnlockBugJudgedByWhatHappened(t *testing.T) {
	p2key := history.StoreKey{Key: "lock-naive", Value: "p2", CreateRevision: 4, ModRevision: 4, Version: 1, Lease: 4}
	crashed := naiveUnlockHistory([]history.Event{
		{At: 10 * time.Second, Kind: history.Crashed, Replica: "p2", Origin: history.ByLearner},
		{At: 10200 * time.Millisecond, Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: "lock-naive", Revision: 5, Succeeded: true, Deleted: 1, Prev: []history.StoreKey{p2key}}},
	}, history.Event{At: 10210 * time.Millisecond, Facts: &history.Facts{Op: "delete", Key: "lock-naive", Revision: 5, Succeeded: true, Deleted: 1, Prev: []history.StoreKey{p2key}}})
	v := Replay(&crashed)
	if s := v.Sentence(); v.Showed || strings.Contains(s, "already deleted") || !strings.Contains(s, "which held P2's lock") || !strings.Contains(s, "when P2 no longer believed it held it: at 10.0s it crashed (your key)") {
		t.Errorf("P2 crashed by the learner: showed %v: %s", v.Showed, s)
	}
	unlockQuestion.Predicted(&crashed, 0)
	if p := crashed.Prediction; p.Unjudged != "" || !p.Correct {
		t.Errorf("P2 crashed, P1's unlock freed the lock for P3: the pick %q is judged %+v", p.Picked, p)
	}

	paused := naiveUnlockHistory([]history.Event{
		{At: 6 * time.Second, Kind: history.Paused, Replica: "p2", Origin: history.ByLearner},
		{At: 7 * time.Second, Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: "lock-naive", Revision: 5, Succeeded: true, Deleted: 1, Prev: []history.StoreKey{p2key}}},
		{At: 11 * time.Second, Kind: history.Resumed, Replica: "p2", Origin: history.ByLearner},
		{At: 11100 * time.Millisecond, Kind: history.Lost, Replica: "p2", Token: 4},
	}, history.Event{At: 11500 * time.Millisecond, Facts: &history.Facts{Op: "delete", Key: "lock-naive", Revision: 5, Succeeded: true}})
	v = Replay(&paused)
	if s := v.Sentence(); v.Showed || !strings.Contains(s, "etcd had already deleted P2's key (revision 5) before P1 unlocked, after you paused P2 at 6.0s") {
		t.Errorf("P2 paused by the learner: showed %v: %s", v.Showed, s)
	}
	unlockQuestion.Predicted(&paused, 0)
	if p := paused.Prediction; p.Correct || !strings.Contains(p.Unjudged, "after you paused P2 at 6.0s") {
		t.Errorf("P2 paused until its key went: the pick %q is judged %+v", p.Picked, p)
	}
}
