package labrun

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// TestByHandFaultsRecordTheirRole: a fault put on a replica by hand is
// replayed by the role that replica played just before it (the crash
// of an owner is the owner's, though the crash ends its ownership), and
// a lab 09 worker that owns shards is an owner.
func TestByHandFaultsRecordTheirRole(t *testing.T) {
	h := history.History{Events: []history.Event{
		{Kind: history.Phase, Step: 1},
		{At: time.Second, Kind: history.Acquired, Step: 1, Replica: "r2"},
		{At: 2 * time.Second, Kind: history.Crashed, Step: 1, Replica: "r2", Origin: history.ByLearner},
		{At: 3 * time.Second, Kind: history.Paused, Step: 1, Replica: "r1", Origin: history.ByLearner},
		{At: 4 * time.Second, Kind: history.Restarted, Step: 1, Replica: "r2", Origin: history.ByLearner},
		{At: 5 * time.Second, Kind: history.Note, Step: 1, Replica: "r3", Facts: &history.Facts{Op: "own", Key: "group/shards/001"}},
		{At: 6 * time.Second, Kind: history.Partitioned, Step: 1, Replica: "r3", Origin: history.ByLearner},
	}}
	got := FaultSchedule(&h)
	want := []struct{ replica, role string }{{"r2", "owner"}, {"r1", "waiter"}, {"r2", "waiter"}, {"r3", "owner"}}
	if len(got) != len(want) {
		t.Fatalf("FaultSchedule = %+v", got)
	}
	for i, w := range want {
		if got[i].Replica != w.replica || got[i].Role != w.role {
			t.Errorf("fault %d (%s of %s): role %q, want %q", i, got[i].Kind, got[i].Replica, got[i].Role, w.role)
		}
	}
	if own, _ := labOwnFaults(got); len(own) != len(got) {
		t.Errorf("faults with roles are not the lab run's to aim: own %d of %d", len(own), len(got))
	}
}

// TestExploreRolesNameTheNewcomer: the replica that joined late is the
// newcomer until it owns, and an owner after.
func TestExploreRolesNameTheNewcomer(t *testing.T) {
	joined := history.Event{At: 3 * time.Second, Kind: history.Note, Replica: "r4", Facts: &history.Facts{Op: OpNewcomer}}
	h := history.History{Events: []history.Event{
		{At: time.Second, Kind: history.Acquired, Replica: "r1"},
		{At: 2 * time.Second, Kind: history.Note, Replica: "r2"},
		joined,
	}}
	if got := Roles(&h); got["r1"] != "owner 1" || got["r2"] != "waiter 1" || got["r4"] != "newcomer" {
		t.Errorf("Roles = %v, want r4 the newcomer", got)
	}
	h.Events = append(h.Events, history.Event{At: 4 * time.Second, Kind: history.Acquired, Replica: "r4"})
	if got := Roles(&h); got["r4"] != "owner 2" {
		t.Errorf("Roles = %v, want the newcomer that took the lock as owner 2", got)
	}
}
