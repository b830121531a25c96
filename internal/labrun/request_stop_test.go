package labrun

import (
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// A replica killed because, told to stop, it had not returned is named
// hung-on-stop, with where its code stood; any other failure of its
// code stays replica-failed.
func TestLabNoFailureNamesAHangApart(t *testing.T) {
	hung := history.Event{At: 9 * time.Second, Kind: ReplicaFailed, Replica: "r2", Facts: &history.Facts{Op: OpHung},
		Text: "told to stop at 3.00 s, it had not returned 6 s later and was killed: it was at election.go:131 in (*Candidate).term, in a call to concurrency.(*Election).Resign (waiting: select)"}
	h := history.History{Events: []history.Event{hung}}
	f := labNoFailure(history.Find(&h, ""))
	if f.Held || f.Violation != "hung-on-stop" || f.At != hung.At || len(f.Replicas) != 1 || f.Replicas[0] != "r2" {
		t.Fatalf("a hang: %+v", f)
	}
	if !strings.Contains(f.Text, "r2's code hung: told to stop at 3.00 s") || !strings.Contains(f.Text, "election.go:131") {
		t.Errorf("the finding does not say whose code hung and where: %s", f.Text)
	}
	panicked := history.Event{At: time.Second, Kind: ReplicaFailed, Replica: "r1", Text: "its process ended by itself: exit status 2: panic: boom"}
	h.Events = []history.Event{panicked, hung}
	if f := labNoFailure(history.Find(&h, "")); f.Violation != "replica-failed" || f.Replicas[0] != "r1" {
		t.Errorf("a panic before the hang: %+v, want replica-failed of r1", f)
	}
}

// The grace covers a correct stop on a cut network with a margin: a
// resign bounded by a second and a revoke bounded by the TTL, twice.
func TestShutdownGraceCoversABoundedStepDown(t *testing.T) {
	for _, ttl := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second} {
		bounded := time.Second + ttl
		if g := shutdownGrace(ttl); g < 2*bounded || g < 5*time.Second {
			t.Errorf("TTL %s: grace %s, want at least twice %s and 5 s", ttl, g, bounded)
		}
	}
}

// TestExplorePlanTriesTheStopsEarly: first of all come a sever of the
// owner and a stop of a waiter, each once; the stop's other cells come
// after every other kind.
func TestExplorePlanTriesTheStopsEarly(t *testing.T) {
	x := pairExplorer(nil)
	plan := x.plan()
	if len(plan) < 2 {
		t.Fatalf("the plan has %d runs", len(plan))
	}
	const i = 0
	sever, stop := plan[i].faults[0], plan[i+1].faults[0]
	if sever.Fault != history.SeverAfter || sever.Role != replica.RoleOwner || sever.Site != pairOwnerSite {
		t.Errorf("the first run is %s, want a sever of the owner at its site", sever)
	}
	if stop.Fault != history.StopAfter || stop.Role != replica.RoleWaiter || stop.Site != pairWaiterSite {
		t.Errorf("the second is %s, want a stop of the waiter at its request", stop)
	}
	seen := map[string]int{}
	firstStop := -1
	for j, pr := range plan {
		if len(pr.faults) != 1 {
			continue
		}
		f := pr.faults[0]
		seen[string(f.Fault)+" "+f.Role+" "+f.Site.Key()]++
		stopKind := f.Fault == history.SeverAfter || f.Fault == history.StopAfter
		switch {
		case j <= i+1:
		case stopKind && firstStop < 0:
			firstStop = j
		case !stopKind && firstStop >= 0:
			t.Errorf("run %d (%s) comes after run %d, a cell of the stop's kinds", j, f, firstStop)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s planned %d times, want once", k, n)
		}
	}
}

// A faults file replays a stop or a sever by what it aimed at: the
// notes the fault left (told to stop, the cut) are not steps of their
// own, or a replay would stop the replica twice.
func TestExploreReplaysAStopOnce(t *testing.T) {
	f := history.RequestFault{ID: 4, Fault: history.StopAfter, Role: "waiter", Site: exploreSite, Occurrence: 1}
	fired := f
	fired.HitReplica, fired.HitRole = "r3", "waiter"
	h := history.History{Events: []history.Event{
		{Kind: history.Phase, Step: 1},
		{Kind: history.Note, Step: 1, Facts: &history.Facts{Op: history.OpArmed, Request: &f}},
		{At: time.Second, Kind: history.Note, Step: 1, Replica: "r3", Facts: &history.Facts{Op: string(history.StopAfter), Succeeded: true, Request: &fired}},
	}}
	got := FaultSchedule(&h)
	if len(got) != 1 || got[0].Kind != RequestArmed || got[0].Request.Fault != history.StopAfter {
		t.Fatalf("FaultSchedule = %+v, want the armed stop alone", got)
	}
	if fs := Fired(&h); len(fs) != 1 || fs[0].HitReplica != "r3" {
		t.Errorf("Fired = %+v, want the stop of r3", fs)
	}
}

// TestExploreSeversTheLeaderToBeWhenTheOwnerSendsNothing: in a calm run
// where the owner reached no site (lab 07's leader with a 60 s lease
// renews it after its term), the stops begin with a sever of the first
// leader at the last request it sent before it led, as it takes over.
func TestExploreSeversTheLeaderToBeWhenTheOwnerSendsNothing(t *testing.T) {
	check := history.CallSite{File: "labs/07_election/election.go", Line: 41, Func: "SafeCampaign", Entry: "SafeCampaign", RPC: "Range"}
	reached := func(at time.Duration, who, role string, s history.CallSite) history.Event {
		return history.Event{At: at, Replica: who, Kind: history.Note, Facts: &history.Facts{Op: history.OpReached, Request: &history.RequestFault{Site: s, HitRole: role, HitReplica: who}}}
	}
	calm := history.History{Events: []history.Event{
		reached(1*time.Millisecond, "r1", replica.RoleWaiter, pairWaiterSite),
		reached(2*time.Millisecond, "r2", replica.RoleWaiter, pairWaiterSite),
		reached(3*time.Millisecond, "r1", replica.RoleWaiter, check),
		{At: 4 * time.Millisecond, Replica: "r1", Kind: history.Acquired},
		reached(5*time.Millisecond, "r2", replica.RoleWaiter, pairOwnerSite),
	}}
	x := pairExplorer(nil)
	x.report.CalmRun = calm
	x.report.Grid = grid(Reached(&calm))
	plan := x.plan()
	if f := plan[0].faults[0]; f.Fault != history.SeverAfter || f.Role != replica.RoleWaiter || f.Site != check {
		t.Errorf("the first run is %s, want a sever of the waiter at %s, its last request before it led", f, check)
	}
}
