package experiment

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

func TestMonitorTwoOwnersAndStaleWrite(t *testing.T) {
	var m monitor
	feed := func(e history.Event) []history.Event { return m.observe(e) }
	if v := feed(history.Event{Kind: history.Acquired, Replica: "a", Token: 5}); len(v) != 0 {
		t.Fatalf("one owner flagged: %v", v)
	}
	feed(history.Event{Kind: history.Paused, Replica: "a"})
	if v := feed(history.Event{Kind: history.Acquired, Replica: "b", Token: 6}); len(v) != 0 {
		t.Fatalf("a paused owner counted as acting: %v", v)
	}
	feed(history.Event{Kind: history.Resumed, Replica: "a"})
	v := feed(history.Event{Kind: history.WriteAccepted, Replica: "a", Token: 5})
	if len(v) != 2 || !strings.Contains(v[0].Text, "two owners") || !strings.Contains(v[1].Text, "stale write") {
		t.Fatalf("zombie write: got %v", v)
	}
	if m.twoOwners != 1 || m.staleWrites != 1 {
		t.Fatalf("counts %d %d", m.twoOwners, m.staleWrites)
	}
	if v := feed(history.Event{Kind: history.WriteRejected, Replica: "a", Token: 5}); len(v) != 0 {
		t.Fatalf("the same pair reported twice: %v", v)
	}
	feed(history.Event{Kind: history.SteppedDown, Replica: "a"})
	if v := feed(history.Event{Kind: history.WriteAccepted, Replica: "b", Token: 6}); len(v) != 0 {
		t.Fatalf("the sole owner's write flagged: %v", v)
	}
}

// TestOwnRulesQuietTheMonitor: a scenario with OwnRules (a lab run,
// whose verdict comes from its lab's promises) gets no flag from the live
// monitor for a paused holder that wakes and tries a write; a scenario
// without OwnRules still gets the flag. (labrun's
// TestLabRunsLeaveOwnershipToTheirRules: every lab's runs have OwnRules.)
func TestOwnRulesQuietTheMonitor(t *testing.T) {
	for _, own := range []bool{true, false} {
		run := &Run{start: time.Now(), Scenario: &Scenario{Name: "t", OwnRules: own}}
		for _, e := range []history.Event{
			{Kind: history.Acquired, Replica: "a", Token: 5}, {Kind: history.Paused, Replica: "a"},
			{Kind: history.Acquired, Replica: "b", Token: 6}, {Kind: history.Resumed, Replica: "a"},
			{Kind: history.WriteRejected, Replica: "a", Token: 5},
		} {
			run.Emit(e)
		}
		flagged := slices.ContainsFunc(run.events, func(e history.Event) bool { return e.Kind == history.InvariantViolated })
		if flagged == own {
			t.Errorf("OwnRules %v: the monitor flagged two owners: %v", own, flagged)
		}
	}
}

func TestResourceFencing(t *testing.T) {
	run := &Run{start: time.Now()}
	a, b := &Replica{Name: "a", run: run}, &Replica{Name: "b", run: run}
	for _, c := range []struct {
		fencing   bool
		wantValue string
		wantRej   int
	}{{true, "b", 1}, {false, "a-late", 0}} {
		res := newResource(run, c.fencing)
		res.Write(a, 7, "a")
		res.Write(b, 8, "b")
		ok := res.Write(a, 7, "a-late")
		st := res.State()
		if ok == c.fencing || st.Rejected != c.wantRej || st.Value != c.wantValue || st.Highest != 8 {
			t.Errorf("fencing %v: accepted %v, state %+v", c.fencing, ok, st)
		}
	}
}

// TestCrashWithoutAProcess: crashing a replica that the script plays
// step by step, with no body of its own, is in the history as a note
// that says nothing was crashed, not silently ignored.
func TestCrashWithoutAProcess(t *testing.T) {
	run := &Run{start: time.Now()}
	r := &Replica{Name: "p2", run: run}
	r.Crash(history.ByLearner)
	if len(run.events) != 1 || run.events[0].Kind != history.Note || run.events[0].Origin != history.ByLearner || !strings.Contains(run.events[0].Text, "not crashed") {
		t.Fatalf("events %+v", run.events)
	}
	if r.State().Crashed {
		t.Error("the replica says it crashed")
	}
}
