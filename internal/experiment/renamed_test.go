package experiment

import (
	"bytes"
	"slices"
	"testing"
)

// TestOldNamesFindTheRenamedScenario: every old name leads to a
// registered scenario under its current name, and none is itself the
// name of a scenario (that one would be unreachable).
func TestOldNamesFindTheRenamedScenario(t *testing.T) {
	old := OldNames()
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
		if CurrentName(was) != now || CurrentName(now) != now {
			t.Errorf("CurrentName(%q) = %q, CurrentName(%q) = %q; want %q both", was, CurrentName(was), now, CurrentName(now), now)
		}
	}
}

// TestHistoryUnderAnOldNameReplays: a history file recorded before its
// scenario was renamed reads as a run of the scenario under its new
// name, and replays to the verdict the same history gives under it.
func TestHistoryUnderAnOldNameReplays(t *testing.T) {
	ttl := func(at int, left int64) Event {
		return Event{At: ms(at), Kind: Measured, Facts: &Facts{Op: "timetolive", Lease: 7, TTLLeft: left}}
	}
	events := []Event{
		{At: 0, Kind: LeaseGranted, TTL: 4}, ttl(0, 3), ttl(1000, 2), ttl(2000, 1),
		{At: ms(2100), Kind: LeaderMoved, Text: "the raft leader moved"}, ttl(2200, 4), ttl(3000, 3),
		{At: ms(6200), Kind: KeyChanged, Facts: &Facts{Op: "delete", Key: "owner"}},
	}
	old := History{Format: HistoryFormat, Scenario: "leader-change-extends-leases", Params: Params{TTL: 4, Replicas: 1, Seed: 1}, Events: events,
		Verdict: &Verdict{Scenario: "leader-change-extends-leases", Summary: "as recorded"}}
	var b bytes.Buffer
	if err := WriteHistory(&b, old); err != nil {
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
	if !got.Showed || got.Summary != want.Summary {
		t.Errorf("replayed %+v, want the verdict under the new name, %+v", got, want)
	}
}
