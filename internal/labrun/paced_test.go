package labrun

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// refusalNote is what a replica says when a refusal of sec seconds
// ends, its code having sent tries requests meanwhile.
func refusalNote(at time.Duration, who string, sec float64, tries int) history.Event {
	return history.Event{At: at, Kind: history.Note, Replica: who, Value: sec,
		Facts: &history.Facts{Op: history.OpRefusal, Succeeded: true, Tries: tries}}
}

// TestLabPacedRetries: a replica whose code retried at once while etcd
// refused its writes breaks paced-retries, by name, at the refusal's
// end; one that paused (the reference's pace, and a backoff from 10 ms)
// keeps it, and so does a run without a refusal.
func TestLabPacedRetries(t *testing.T) {
	calm := []history.Event{{At: time.Second, Kind: history.Acquired, Replica: "r1", Token: 5}}
	if ok, s := said(labPacedRetries(&history.Findings{Events: calm})); !ok || !strings.Contains(s, "refused no") {
		t.Fatalf("a run without a refusal: %v %s", ok, s)
	}
	paced := append(calm, refusalNote(3*time.Second, "r2", 2, 21), refusalNote(4*time.Second, "r3", 2, 9))
	if ok, s := said(labPacedRetries(&history.Findings{Events: paced})); !ok {
		t.Fatalf("10 and 5 requests a second broke the rule: %s", s)
	}
	spin := append(paced, refusalNote(5*time.Second, "r1", 2, 1400))
	f := labPacedRetries(&history.Findings{Events: spin})
	ok, s := said(f)
	wantNamed(t, ok, s, "retry-storm")
	if !slices.Equal(f.Replicas, []string{"r1"}) || f.At != 5*time.Second || !strings.Contains(s, "700 a second") {
		t.Errorf("finding %+v: want r1 at 5 s, 700 a second", f)
	}
	// Exactly at the bound is still a pace.
	edge := append(calm, refusalNote(3*time.Second, "r2", 2, 2*pacedLimit))
	if ok, s := said(labPacedRetries(&history.Findings{Events: edge})); !ok {
		t.Errorf("%d requests a second, the bound itself, broke the rule: %s", pacedLimit, s)
	}
}

// TestPacedRetriesIsARuleOfTheRetryLoopLabs: labs 07 and 09, whose code
// runs its own retry loop, are held to the rate; the others, whose
// calls the replica program makes on its own schedule, are not.
func TestPacedRetriesIsARuleOfTheRetryLoopLabs(t *testing.T) {
	for _, id := range IDs() {
		l, _ := byID(id)
		x := &explorer{o: ExploreOptions{Lab: l}}
		want := id == "07_election" || id == "09_shards"
		if x.paced() != want {
			t.Errorf("lab %s judged by paced-retries: %v, want %v", id, x.paced(), want)
		}
	}
}

// TestExploreTriesTheNewKindsEarlyWhereTheyShow: a refusal at the first
// request a waiter sent, in a lab that judges the rate, and the end of
// the lease under an owner's plain delete are in the first tier; the
// same kinds elsewhere keep their place in the order. So is a failed
// write, once a site (the owner's where the owner sends it).
func TestExploreTriesTheNewKindsEarlyWhereTheyShow(t *testing.T) {
	grant := history.CallSite{File: "labs/09_shards/shards.go", Line: 120, Func: "(*Worker).member", Entry: "(*Worker).Run", RPC: "LeaseGrant"}
	del := history.CallSite{File: "labs/09_shards/shards.go", Line: 200, Func: "(*Worker).rebalance", Entry: "(*Worker).Run", RPC: "DeleteRange"}
	x := &explorer{o: ExploreOptions{Lab: lab09}, firstWaiter: grant}
	// Elsewhere each kind keeps its place in the order (after the
	// others but for the stop's kinds, which come last).
	refuse, revoke := slices.Index(exploreOrder, history.RefuseWrites), slices.Index(exploreOrder, history.RevokeLease)
	fail := slices.Index(exploreOrder, history.FailBefore)
	for _, c := range []struct {
		site history.CallSite
		role string
		k    history.FaultAt
		tier int
	}{
		{grant, replica.RoleWaiter, history.RefuseWrites, 0},
		{grant, replica.RoleNewcomer, history.RefuseWrites, refuse},
		{del, replica.RoleWaiter, history.RefuseWrites, refuse},
		{del, replica.RoleOwner, history.RevokeLease, 0},
		{del, replica.RoleWaiter, history.RevokeLease, revoke},
		{grant, replica.RoleWaiter, history.RevokeLease, revoke},
		{grant, replica.RoleWaiter, history.PauseAfter, 0},
		{grant, replica.RoleOwner, history.FailBefore, fail},
	} {
		if got := x.tier(c.site, c.role, c.k); got != c.tier {
			t.Errorf("%s at %s [%s]: tier %d, want %d", c.k, c.site, c.role, got, c.tier)
		}
	}
	x.report = &ExploreReport{Grid: grid([]history.RequestFault{{Site: grant, HitRole: replica.RoleWaiter}, {Site: del, HitRole: replica.RoleOwner}})}
	for _, c := range []struct {
		role string
		tier int
	}{{replica.RoleOwner, 0}, {replica.RoleWaiter, fail}} {
		if got := x.tier(del, c.role, history.FailBefore); got != c.tier {
			t.Errorf("a failed delete of the %s: tier %d, want %d", c.role, got, c.tier)
		}
	}
	plan := x.depth1()
	if len(plan) != 2*len(history.FaultKinds()) {
		t.Fatalf("%d runs planned, want one per site and kind", len(plan))
	}
	if a, b, c := plan[0].faults[0], plan[1].faults[0], plan[2].faults[0]; a.Fault != history.RefuseWrites || b.Fault != history.FailBefore || c.Fault != history.RevokeLease || !x.firstTier(a) || !x.firstTier(b) || !x.firstTier(c) {
		t.Errorf("the plan begins %s; %s; %s, want the refusal, the owner's failed delete and the revoke brought forward, in the first tier", a, b, c)
	}
	x.o.Lab = lab05 // no rule on the rate: a refusal is not brought forward
	if got := x.tier(grant, replica.RoleWaiter, history.RefuseWrites); got != refuse {
		t.Errorf("lab 05's refusal at a waiter's first request: tier %d, want %d", got, refuse)
	}
}

// TestRefuseAndRevokeReplayFromAFaultsFile: a history with a refusal and
// the end of a lease at requests replays the two armed faults, not what
// they did (the refusal's events, the revoke and etcd's answer), and
// both count as fired.
func TestRefuseAndRevokeReplayFromAFaultsFile(t *testing.T) {
	refuse := history.RequestFault{ID: 1, Fault: history.RefuseWrites, Role: replica.RoleWaiter, Site: exploreSite, Occurrence: 1}
	revoke := history.RequestFault{ID: 2, Fault: history.RevokeLease, Role: replica.RoleOwner, Site: exploreSite, Occurrence: 1}
	fired := func(f history.RequestFault, who string) *history.RequestFault {
		f.HitReplica, f.HitRole = who, f.Role
		return &f
	}
	h := history.History{Events: []history.Event{
		{Kind: history.Phase, Step: 1},
		{Kind: history.Note, Step: 1, Facts: &history.Facts{Op: history.OpArmed, Request: &refuse}},
		{Kind: history.Note, Step: 1, Facts: &history.Facts{Op: history.OpArmed, Request: &revoke}},
		{At: time.Second, Kind: history.RequestsRefused, Step: 1, Replica: "r2", Origin: history.ByScript, Facts: &history.Facts{Op: "refuse", Request: fired(refuse, "r2")}},
		{At: 2 * time.Second, Kind: history.LeaseRevoked, Step: 1, Replica: "r1", Origin: history.ByScript, Facts: &history.Facts{Op: "revoke", Succeeded: true, Lease: 7, Revision: 40, Request: fired(revoke, "r1")}},
		refusalNote(3*time.Second, "r2", 2, 20),
	}}
	got := FaultSchedule(&h)
	if len(got) != 2 || got[0].Request == nil || got[0].Request.Fault != history.RefuseWrites || got[1].Request == nil || got[1].Request.Fault != history.RevokeLease {
		t.Fatalf("FaultSchedule = %+v, want the armed refusal, then the armed revoke", got)
	}
	if fs := Fired(&h); len(fs) != 2 || fs[0].HitReplica != "r2" || fs[1].HitReplica != "r1" {
		t.Errorf("Fired = %+v, want the refusal at r2 and the revoke at r1", fs)
	}
}

// TestNewcomerDoesNotWaitForARevoke: the newcomer joins at a fault aimed
// at another replica, but not at the end of a lease, which brings its
// own change: it joins as in a calm run, so that a worker gives it
// shards back before the revoke is due.
func TestNewcomerDoesNotWaitForARevoke(t *testing.T) {
	revoke := history.RequestFault{ID: 1, Fault: history.RevokeLease, Role: replica.RoleOwner, Site: exploreSite, Occurrence: 1}
	pause := history.RequestFault{ID: 2, Fault: history.PauseAfter, Role: replica.RoleOwner, Site: exploreSite, Occurrence: 1}
	lr := &labRun{armed: []history.RequestFault{revoke}}
	if lr.waitsForFault() {
		t.Error("the newcomer waits for a revoke")
	}
	lr.armed = append(lr.armed, pause)
	if !lr.waitsForFault() {
		t.Error("the newcomer does not wait for a pause beside a revoke")
	}
}
