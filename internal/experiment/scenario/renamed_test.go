package scenario

import (
	"bytes"
	"slices"
	"testing"

	"github.com/ownership-election/playground/internal/history"
)

// TestOldNamesFindTheRenamedScenario: every old name leads to a
// registered scenario under its current name, and none is itself the
// name of a scenario (that one would be unreachable).
func TestOldNamesFindTheRenamedScenario(t *testing.T) {
	old := history.OldNames()
	if len(old) == 0 {
		t.Fatal("no renamed scenarios: leader-change-extends-leases and thundering-herd were renamed")
	}
	for was, now := range old {
		if slices.Contains(Names(), was) {
			t.Errorf("old name %q is also a scenario's name", was)
		}
		sc := Lookup(was)
		if sc == nil || sc.Name != now || sc != Lookup(now) {
			t.Errorf("Lookup(%q) = %v, want the scenario %q", was, sc, now)
		}
		if history.CurrentName(was) != now || history.CurrentName(now) != now {
			t.Errorf("CurrentName(%q) = %q, CurrentName(%q) = %q; want %q both", was, history.CurrentName(was), now, history.CurrentName(now), now)
		}
	}
}

// TestHistoryUnderAnOldNameReplays: a history file recorded before its
// scenario was renamed reads as a run of the scenario under its new
// name, and replays to the verdict the same history gives under it.
func TestHistoryUnderAnOldNameReplays(t *testing.T) {
	ttl := func(at int, left int64) history.Event {
		return history.Event{At: ms(at), Kind: history.Measured, Facts: &history.Facts{Op: "timetolive", Lease: 7, TTLLeft: left}}
	}
	events := []history.Event{
		{At: 0, Kind: history.LeaseGranted, TTL: 4}, ttl(0, 3), ttl(1000, 2), ttl(2000, 1),
		{At: ms(2100), Kind: history.LeaderMoved, Text: "the raft leader moved"}, ttl(2200, 4), ttl(3000, 3),
		{At: ms(6200), Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: "owner"}},
	}
	old := history.History{Format: history.HistoryFormat, Scenario: "leader-change-extends-leases", Params: history.Params{TTL: 4, Replicas: 1, Seed: 1}, Events: events,
		Verdict: &history.Verdict{Scenario: "leader-change-extends-leases", Summary: "as recorded"}}
	var b bytes.Buffer
	if err := history.Write(&b, old); err != nil {
		t.Fatal(err)
	}
	back, err := ReadHistory(&b)
	if err != nil {
		t.Fatalf("a history under the old name was refused: %v", err)
	}
	if back.Scenario != "leader-change" || back.Verdict.Scenario != "leader-change" {
		t.Errorf("read back as %q (verdict %q), want leader-change", back.Scenario, back.Verdict.Scenario)
	}
	renamed := old
	renamed.Scenario = "leader-change"
	got, want := Replay(&back), Replay(&renamed)
	if !got.Showed || got.Sentence() != want.Sentence() {
		t.Errorf("replayed %+v, want the verdict under the new name, %+v", got, want)
	}
}
