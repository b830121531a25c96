package labrun

import (
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

var exploreSite = history.CallSite{File: "labs/06_fenced_write/fenced.go", Line: 38, Func: "Write", Entry: "Write", RPC: "Txn"}

// TestExploreFaultsFileReplaysWhatWasArmed: a history of a run with
// request faults replays its armed faults, not the cut and the stop they
// did (those come again from the faults), nor its notes of sites reached.
func TestExploreFaultsFileReplaysWhatWasArmed(t *testing.T) {
	f := history.RequestFault{ID: 3, Fault: history.CutAfter, Role: "owner", Site: exploreSite, Occurrence: 1}
	fired := f
	fired.HitReplica, fired.HitRole = "r2", "owner"
	h := history.History{Events: []history.Event{
		{Kind: history.Phase, Step: 1},
		{Kind: history.Note, Step: 1, Facts: &history.Facts{Op: history.OpArmed, Request: &f}},
		{Kind: history.Note, Step: 1, Replica: "r2", Facts: &history.Facts{Op: history.OpReached, Request: &history.RequestFault{Site: exploreSite, HitRole: "owner"}}},
		{At: time.Second, Kind: history.Note, Step: 1, Replica: "r2", Facts: &history.Facts{Op: "cut", Request: &fired}},
		{At: time.Second, Kind: history.Partitioned, Step: 1, Replica: "r2", Origin: history.ByScript},
		{At: 5 * time.Second, Kind: history.Healed, Step: 1, Replica: "r2", Origin: history.ByScript},
		{At: 6 * time.Second, Kind: history.Paused, Step: 1, Replica: "r1", Origin: history.ByLearner},
	}}
	got := FaultSchedule(&h)
	if len(got) != 2 || got[0].Request == nil || got[0].Request.ID != 3 || got[0].Kind != RequestArmed || got[1].Kind != history.Paused {
		t.Fatalf("FaultSchedule = %+v, want the armed cut, then the learner's pause", got)
	}
	armed, rest := splitRequestFaults(got)
	if len(armed) != 1 || len(rest) != 1 {
		t.Fatalf("split: %d armed, %d timed; want 1 and 1", len(armed), len(rest))
	}
	if !faultsNeedCluster([]history.ScheduledFault{{Kind: RequestArmed, Request: &history.RequestFault{Fault: history.LeaderAfter}}}) {
		t.Error("a fault that moves etcd's leader does not ask for the 3-member cluster")
	}
	if r := Reached(&h); len(r) != 1 || r[0].HitRole != "owner" {
		t.Errorf("Reached = %+v, want the one site as owner", r)
	}
	if fs := Fired(&h); len(fs) != 1 || fs[0].HitReplica != "r2" {
		t.Errorf("Fired = %+v, want the cut at r2", fs)
	}
}

// TestExploreArmsEachReplica: a fault aimed at a role is armed in every
// replica, one aimed at a replica in that one only.
func TestExploreArmsEachReplica(t *testing.T) {
	lr := &labRun{armed: []history.RequestFault{
		{ID: 1, Fault: history.FailBefore, Role: "waiter", Site: exploreSite, Occurrence: 2},
		{ID: 2, Fault: history.LoseAnswer, Replica: "r2", Site: exploreSite, Occurrence: 1},
	}}
	if got := lr.armedFor("r1"); got != `[{"id":1,"fault":"fail","role":"waiter","site":"labs/06_fenced_write/fenced.go:38","rpc":"Txn","n":2}]` {
		t.Errorf("r1 is armed with %s", got)
	}
	if got := lr.armedFor("r2"); got == "" || len(got) < 100 {
		t.Errorf("r2 is armed with %s, want both", got)
	}
}

// TestExploreMatchesTheReferencesSite: a learner's site is matched to the
// reference's by the lab function and RPC, in line order.
func TestExploreMatchesTheReferencesSite(t *testing.T) {
	mine := []history.CallSite{
		{File: "a.go", Line: 10, Entry: "Acquire", RPC: "Txn"},
		{File: "a.go", Line: 30, Entry: "Acquire", RPC: "Txn"},
		{File: "a.go", Line: 50, Entry: "Release", RPC: "Txn"},
	}
	theirs := []history.CallSite{
		{File: "a.go", Line: 7, Entry: "Release", RPC: "Txn"},
		{File: "a.go", Line: 22, Entry: "Acquire", RPC: "Txn"},
	}
	if s, ok := matchSite(mine[1], mine, theirs); !ok || s.Line != 22 {
		t.Errorf("the second Acquire Txn matched %+v, %v; want the reference's only one, line 22", s, ok)
	}
	if s, ok := matchSite(mine[2], mine, theirs); !ok || s.Line != 7 {
		t.Errorf("the Release Txn matched %+v, %v; want line 7", s, ok)
	}
	// A Put the reference never sends from Acquire: the same fault at
	// the reference's request from Acquire (its Txn), not no comparison
	// at all, which would count any failure there against the learner.
	put := history.CallSite{File: "a.go", Line: 40, Entry: "Acquire", RPC: "Put"}
	if s, ok := matchSite(put, append(mine, put), theirs); !ok || s.Line != 22 {
		t.Errorf("a Put in Acquire matched %+v, %v; want the reference's Acquire Txn, line 22", s, ok)
	}
	if _, ok := matchSite(history.CallSite{Entry: "Renew", RPC: "Txn"}, mine, theirs); ok {
		t.Error("a function the reference does not have was matched")
	}
}

// TestExploreMatchesTheCheckNotTheResign: lab 07's check after Campaign
// made with a Txn (the reference reads with a Range) is matched to the
// reference's check, the same place among SafeCampaign's requests, not
// to its next Txn in line order (its Resign, in another function).
func TestExploreMatchesTheCheckNotTheResign(t *testing.T) {
	site := func(line int, fn, rpc string) history.CallSite {
		return history.CallSite{File: "election.go", Line: line, Func: fn, Entry: "(*Candidate).Run", RPC: rpc}
	}
	mine := []history.CallSite{
		site(37, "SafeCampaign", "Txn"), site(37, "SafeCampaign", "Range"), site(37, "SafeCampaign", "Watch"),
		site(43, "SafeCampaign", "Txn"), site(130, "(*Candidate).term", "Txn"),
	}
	theirs := []history.CallSite{
		site(35, "SafeCampaign", "Txn"), site(35, "SafeCampaign", "Range"), site(35, "SafeCampaign", "Watch"),
		site(41, "SafeCampaign", "Range"), site(132, "(*Candidate).term", "Txn"),
	}
	for _, c := range []struct {
		s    history.CallSite
		want int
		rpc  string
	}{{mine[3], 41, "Range"}, {mine[0], 35, "Txn"}, {mine[1], 35, "Range"}, {mine[4], 132, "Txn"}} {
		if got, ok := matchSite(c.s, mine, theirs); !ok || got.Line != c.want || got.RPC != c.rpc {
			t.Errorf("%s matched %s, %v; want line %d %s", c.s, got, ok, c.want, c.rpc)
		}
	}
}

// TestExploreDivergenceMatchesRoles: two runs whose replicas have
// different names but play the same parts differ first where the first
// owner's write was taken in one and refused in the other.
func TestExploreDivergenceMatchesRoles(t *testing.T) {
	ev := func(s float64, k history.Kind, r string) history.Event {
		return history.Event{At: time.Duration(s * float64(time.Second)), Kind: k, Replica: r}
	}
	mine := history.History{Events: []history.Event{
		ev(1, history.Acquired, "r2"), ev(1.1, history.WriteAccepted, "r2"), ev(1.2, history.WriteAccepted, "r2"),
		ev(2, history.Paused, "r2"), ev(5, history.Acquired, "r1"), ev(6, history.Resumed, "r2"), ev(6.1, history.WriteAccepted, "r2"),
	}}
	theirs := history.History{Events: []history.Event{
		ev(1, history.Acquired, "r1"), ev(1.1, history.WriteAccepted, "r1"),
		ev(2, history.Paused, "r1"), ev(5, history.Acquired, "r3"), ev(6, history.Resumed, "r1"), ev(6.1, history.WriteRejected, "r1"),
	}}
	d, ok := FirstDivergence(&mine, &theirs)
	if !ok {
		t.Fatal("no divergence found")
	}
	if d.MineRole != "owner 1" || d.TheirsRole != "owner 1" || d.Mine.Kind != history.WriteAccepted || d.Theirs.Kind != history.WriteRejected {
		t.Errorf("divergence %+v, want owner 1's write taken against owner 1's refused", d)
	}
	if _, ok := FirstDivergence(&mine, &mine); ok {
		t.Error("a run diverges from itself")
	}
}

// TestExploreDivergenceAtTheWriteThatBrokeARule: both runs' owner
// resumes and has a write taken, but the learner's is the stale write
// its verdict names (the reference's had landed before its pause): the
// runs differ there, though the kinds of event are the same.
func TestExploreDivergenceAtTheWriteThatBrokeARule(t *testing.T) {
	ev := func(s float64, k history.Kind, r string) history.Event {
		return history.Event{At: time.Duration(s * float64(time.Second)), Kind: k, Replica: r}
	}
	stale := ev(7.06, history.WriteAccepted, "r1")
	mine := history.History{Events: []history.Event{
		ev(0.04, history.Acquired, "r1"), ev(0.05, history.Paused, "r1"), ev(2.5, history.Acquired, "r2"),
		ev(7.05, history.Resumed, "r1"), stale, ev(7.1, history.Lost, "r1"),
	}, Verdict: &history.Verdict{Findings: []history.Finding{{Property: "stale-write-refused", Violation: "stale-write", Held: false, Events: []history.Event{stale}}}}}
	theirs := history.History{Events: []history.Event{
		ev(0.04, history.Acquired, "r2"), ev(0.05, history.Paused, "r2"), ev(2.4, history.Acquired, "r3"),
		ev(7.04, history.Resumed, "r2"), ev(7.05, history.WriteAccepted, "r2"), ev(7.1, history.Lost, "r2"),
	}, Verdict: &history.Verdict{Showed: true}}
	d, ok := FirstDivergence(&mine, &theirs)
	if !ok {
		t.Fatal("no divergence found: the stale write and the reference's write in time were taken for the same step")
	}
	if d.Index != 4 || d.Mine.At != stale.At || !strings.Contains(d.MineText, "write-accepted, broke stale-write: ") {
		t.Errorf("divergence at step %d: %q | %q; want step 5, the stale write, named", d.Index+1, d.MineText, d.TheirsText)
	}
}

// TestExploreSaysWhatTheReferenceDid: "held" only where the reference's
// run was hit by the same fault and broke no rule.
func TestExploreSaysWhatTheReferenceDid(t *testing.T) {
	f := history.RequestFault{ID: 3, Fault: history.PauseAfter, Role: "owner", Site: exploreSite, Occurrence: 1}
	hit := history.Event{Kind: history.Note, Facts: &history.Facts{Op: string(history.PauseAfter), Succeeded: true, Request: &f}}
	held := &history.Verdict{Showed: true, Rules: true}
	broke := &history.Verdict{Rules: true, Findings: []history.Finding{{Property: "one-owner", Held: false}}}
	for _, c := range []struct {
		ref  history.History
		want string
	}{
		{history.History{}, "not run"},
		{history.History{Verdict: held}, "the fault did not hit it"},
		{history.History{Verdict: held, Events: []history.Event{hit}}, "held"},
		{history.History{Verdict: broke, Events: []history.Event{hit}}, "broke only one-owner"},
	} {
		v := Violation{Faults: []history.RequestFault{f}, Reference: c.ref}
		if got := v.ReferenceSays(); (c.want == "held" && got != "held") || !strings.Contains(got, c.want) {
			t.Errorf("reference %+v: says %q, want %q", c.ref.Verdict, got, c.want)
		}
	}
}
