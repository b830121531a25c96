package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// The case studies' own expectations, beyond Showed (TestScenarios runs
// them): what the checker finds in each part, and that the recorded
// history replays to the same verdict without etcd.

// replayed checks that the history of events judges as the run did.
func replayed(t *testing.T, name string, v history.Verdict, events []history.Event) *history.History {
	t.Helper()
	h := &history.History{Format: history.HistoryFormat, Scenario: name, Params: Lookup(name).Normalize(history.Params{}), Events: events}
	if r := Replay(h); r.Showed != v.Showed || r.Sentence() != v.Sentence() {
		t.Errorf("replayed, the history gives another verdict:\n%s\nnot\n%s", r.Sentence(), v.Sentence())
	}
	return h
}

func accepted(f *history.Findings) (n int) {
	for _, w := range f.Stale {
		if w.Accepted {
			n++
		}
	}
	return n
}

func expectPartitionedPrimary(t *testing.T, v history.Verdict, events []history.Event) {
	h := replayed(t, "partitioned-primary", v, events)
	none, lease, fenced := history.Find(h, primaryParts[0].name), history.Find(h, primaryParts[1].name), history.Find(h, primaryParts[2].name)
	if none == nil || lease == nil || fenced == nil {
		t.Fatalf("parts missing: %v %v %v", none != nil, lease != nil, fenced != nil)
	}
	if len(none.TwoOwners) == 0 || accepted(none) == 0 {
		t.Errorf("no lease, no fence: %d overlaps, %d stale writes taken; want some of both", len(none.TwoOwners), accepted(none))
	}
	if len(lease.TwoOwners) != 0 || accepted(lease) == 0 || deadlineLead(lease) == "" {
		t.Errorf("lease on the primary: %d overlaps, %d stale writes taken, stepped down first: %q; want none, some, yes", len(lease.TwoOwners), accepted(lease), deadlineLead(lease))
	}
	if accepted(fenced) != 0 || len(fenced.Stale) == 0 {
		t.Errorf("fenced: stale writes %+v; want refused ones only", fenced.Stale)
	}
}

func expectFlappingLink(t *testing.T, v history.Verdict, events []history.Event) {
	h := replayed(t, "flapping-link", v, events)
	off, on := viewOf(history.Find(h, preVotePart(false))), viewOf(history.Find(h, preVotePart(true)))
	if off.cuts != flaps || on.cuts != flaps {
		t.Errorf("the link went down %d and %d times, want %d each", off.cuts, on.cuts, flaps)
	}
	if off.changes() == 0 || on.changes() != 0 {
		t.Errorf("new leader terms: %d with Pre-Vote off, %d with it on; want some and none", off.changes(), on.changes())
	}
}

func expectZombieController(t *testing.T, v history.Verdict, events []history.Event) {
	h := replayed(t, "zombie-controller", v, events)
	plain, guarded := history.Find(h, zombiePart(false)), history.Find(h, zombiePart(true))
	if newControllerKept(plain) || !newControllerKept(guarded) {
		t.Errorf("the new controller's decision survived: plain %v, guarded %v; want false, true", newControllerKept(plain), newControllerKept(guarded))
	}
	if accepted(guarded) != 0 || len(guarded.Stale) == 0 || accepted(plain) == 0 {
		t.Errorf("stale writes: plain %+v, guarded %+v", plain.Stale, guarded.Stale)
	}
}

// TestFlappingVerdictFromReports: the flapping-link properties read the
// members' status reports, so a history where the cluster changed leader
// with Pre-Vote on is not shown, and one where nobody lost a leader shows
// nothing either.
func TestFlappingVerdictFromReports(t *testing.T) {
	status := func(at int, member string, term uint64, leader string) history.Event {
		return history.Event{At: time.Duration(at) * time.Millisecond, Kind: history.LeaderObserved, Replica: member,
			Facts: &history.Facts{Op: "status", Succeeded: true, RaftTerm: term, Leader: leader}}
	}
	part := func(name string, changed bool) []history.Event {
		evs := []history.Event{{Kind: history.PartBegins, Text: name}, status(0, "m1", 2, "m2"), status(0, "m2", 2, "m2"),
			{At: 10 * time.Millisecond, Kind: history.Partitioned, Replica: "m1"}, status(400, "m1", 2, "")}
		evs = append(evs, history.Event{At: 900 * time.Millisecond, Kind: history.Healed, Replica: "m1"})
		if changed {
			evs = append(evs, status(1000, "m2", 3, "m1"), status(1000, "m1", 3, "m1"))
		} else {
			evs = append(evs, status(1000, "m1", 2, "m2"))
		}
		return evs
	}
	judge := func(offChanged, onChanged bool) history.Verdict {
		h := history.History{Scenario: "flapping-link", Events: append(part(preVotePart(false), offChanged), part(preVotePart(true), onChanged)...)}
		return Check(&h, nil)
	}
	if v := judge(true, false); !v.Showed {
		t.Errorf("churn off, steady on: not shown: %s", v.Sentence())
	}
	if v := judge(true, true); v.Showed || !strings.Contains(v.Sentence(), "one new leader term") {
		t.Errorf("a leader change with Pre-Vote on was shown: %s", v.Sentence())
	}
	if v := judge(false, false); v.Showed {
		t.Errorf("no leader change with Pre-Vote off was shown: %s", v.Sentence())
	}
}
