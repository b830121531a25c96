package scenario

import (
	"testing"

	"github.com/ownership-election/playground/internal/history"
)

// fencingHistory: the zombie a (token 5) wakes after b took over with 8;
// with fencing off its write is taken at 50 ms, with fencing on c's stale
// write is refused at 90 ms.
func fencingHistory() history.History {
	return history.History{Scenario: "fencing", Events: []history.Event{
		{At: 0, Kind: history.PartBegins, Text: fencingPart(false)},
		{At: 0, Kind: history.Note, Facts: &history.Facts{Op: history.OpNewResource, Succeeded: false}},
		acquired(0, "a", 5, "e/a"), write(5, "a", 5, true), ev(10, history.Paused, "a"),
		acquired(20, "b", 8, "e/b"), write(30, "b", 8, true),
		ev(40, history.Resumed, "a"), write(50, "a", 5, true), ev(60, history.Lost, "a"),
		{At: ms(70), Kind: history.PartBegins, Text: fencingPart(true)},
		{At: ms(70), Kind: history.Note, Facts: &history.Facts{Op: history.OpNewResource, Succeeded: true}},
		acquired(80, "c", 12, "e/c"), write(85, "c", 12, true), write(90, "d", 11, false),
		{At: ms(95), Kind: history.Measured, Figure: "x", Value: 1},
	}}
}

func TestFocusIsTheFirstFinding(t *testing.T) {
	h := fencingHistory()
	if at, ok := Focus(&h); !ok || at != ms(50) {
		t.Errorf("both variants: focus %v %v, want the stale write taken at 50ms", at, ok)
	}
	on := true
	h.Params.Fencing = &on // only the fencing-on part is judged
	if at, ok := Focus(&h); !ok || at != ms(90) {
		t.Errorf("fencing on only: focus %v %v, want the refusal at 90ms", at, ok)
	}
	h = history.History{Scenario: "renewal", Events: []history.Event{
		{At: ms(10), Kind: history.Measured, Figure: "a"}, {At: ms(20), Kind: history.Measured, Figure: "b"}, ev(30, history.Released, "r1")}}
	if at, ok := Focus(&h); !ok || at != ms(20) {
		t.Errorf("no overlap nor stale write: focus %v %v, want the last figure at 20ms", at, ok)
	}
	h = history.History{Scenario: "renewal", Events: []history.Event{ev(30, history.Released, "r1")}}
	if _, ok := Focus(&h); ok {
		t.Error("a history with nothing to show has a focus")
	}
}

func TestResourceAfter(t *testing.T) {
	h := fencingHistory()
	s := history.InitialResource()
	if !s.Fencing {
		t.Fatal("a run's first resource checks tokens")
	}
	var at50, end history.ResourceState
	for _, e := range h.Events {
		s = s.After(e)
		if e.At == ms(50) {
			at50 = s
		}
	}
	end = s
	if at50.Fencing || at50.Accepted != 3 || at50.Writer != "a" || at50.Highest != 8 || at50.Rejected != 0 {
		t.Errorf("after the zombie's write: %+v, want fencing off, 3 accepted, a's value, highest 8", at50)
	}
	if !end.Fencing || end.Accepted != 1 || end.Rejected != 1 || end.Writer != "c" || end.Highest != 12 {
		t.Errorf("at the end: %+v, want the second resource: fencing on, c's write, d's refused", end)
	}
	if off := end.After(history.Event{Kind: history.Note, Facts: &history.Facts{Op: history.OpFencing}}); off.Fencing || off.Accepted != 1 {
		t.Errorf("fencing switched off: %+v", off)
	}
}

// Every property a scenario is judged by has a name, one to a part, and
// judges with Check or Find: the name is what its finding is known by.
func TestPropertiesAreNamed(t *testing.T) {
	for _, sc := range Scenarios() {
		seen := map[string]bool{}
		for _, p := range sc.Shows {
			if p.Name == "" || seen[p.Part+"/"+p.Name] {
				t.Errorf("%s: property of part %q named %q: unnamed or named twice", sc.Name, p.Part, p.Name)
			}
			seen[p.Part+"/"+p.Name] = true
			if (p.Check == nil) == (p.Find == nil) {
				t.Errorf("%s: property %s has both Check and Find, or neither", sc.Name, p.Name)
			}
		}
	}
}
