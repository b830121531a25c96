package timeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// twoBelievers is a history where belief and etcd's truth differ: a1
// owns the lock, is cut off, and its key is deleted when its lease runs
// out, but it never hears of it; a3 then creates the key and owns it. a3
// is right (etcd holds its key), a1 only believes it owns. The monitor's
// live event names a3, whose take-over made the overlap.
func twoBelievers() []history.Event {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	lock := "lock"
	put := func(at int, who string, rev int64) history.Event {
		k := history.StoreKey{Key: lock, Value: who, CreateRevision: rev, ModRevision: rev, Version: 1, Lease: rev}
		return history.Event{At: ms(at), Kind: history.KeyChanged, Text: fmt.Sprintf("etcd: %s = %s", lock, who),
			Facts: &history.Facts{Op: "put", Key: lock, Revision: rev, Succeeded: true, Held: &k}}
	}
	acquired := func(at int, who string, rev int64) history.Event {
		return history.Event{At: ms(at), Kind: history.Acquired, Replica: who, Token: rev,
			Facts: &history.Facts{Op: "txn", Key: lock, Revision: rev, Succeeded: true}, Text: "got the lock"}
	}
	return []history.Event{
		put(10, "a1", 5), acquired(10, "a1", 5),
		{At: ms(100), Kind: history.Partitioned, Replica: "a1", Text: "cut off"},
		{At: ms(1200), Kind: history.KeyChanged, Text: "etcd: lock deleted",
			Facts: &history.Facts{Op: "delete", Key: lock, Revision: 7, Succeeded: true, Deleted: 1, Held: &history.StoreKey{Key: lock, ModRevision: 7}}},
		put(1300, "a3", 8), acquired(1300, "a3", 8),
		{At: ms(1300), Kind: history.InvariantViolated, Replica: "a3", Text: "two owners at once (a3 acquired): a1 (token 5), a3 (token 8)"},
		{At: ms(1400), Kind: history.WriteAccepted, Replica: "a1", Token: 5, Facts: &history.Facts{Op: "write", Token: 5, Succeeded: true}},
		{At: ms(1400), Kind: history.InvariantViolated, Replica: "a1", Token: 5, Text: "stale write accepted: token 5 after token 8 was issued"},
	}
}

// violatedLanes is the lanes marked ! in item i.
func violatedLanes(tl timeline, i int) []string {
	var out []string
	for l, s := range tl.states[i] {
		if s.violated {
			out = append(out, tl.lanes[l])
		}
	}
	return out
}

// TestTwoOwnersMarkedByEtcdsTruth: the ! of two owners at once goes on
// the replica that acted as owner while etcd held the other's key (the
// checker's finding), not on the one whose act the monitor named; a
// stale write accepted marks its writer; nothing else is marked.
func TestTwoOwnersMarkedByEtcdsTruth(t *testing.T) {
	events := twoBelievers()
	h := history.History{Events: events}
	f := history.Find(&h, "")
	if len(f.TwoOwners) != 1 || f.TwoOwners[0].Holder != "a3" || f.TwoOwners[0].Acting != "a3" {
		t.Fatalf("the checker's finding is %+v: want a3's take-over, with etcd holding a3's key", f.TwoOwners)
	}
	tl := buildTimeline(events, []string{"a1", "a3"}, nil, false)
	marked := map[string][]string{}
	for i, it := range tl.items {
		if got := violatedLanes(tl, i); len(got) > 0 {
			e := tl.events[it.first]
			marked[fmt.Sprintf("%s %s %.1fs", e.Kind, e.Replica, e.At.Seconds())] = got
		}
	}
	want := map[string][]string{
		"invariant-violated a3 1.3s": {"a1"}, // the live report of the overlap: a1 believes, etcd holds a3
		"invariant-violated a1 1.4s": {"a1"}, // a1's stale write, taken
	}
	if fmt.Sprint(marked) != fmt.Sprint(want) {
		t.Errorf("marks %v, want %v", marked, want)
	}
	// The column says whose key etcd held, beside the monitor's words.
	for i, it := range tl.items {
		if e := tl.events[it.first]; e.Kind == history.InvariantViolated && e.Replica == "a3" {
			if got := tl.eventWords(i); !strings.Contains(got, "etcd held a3's key, so a1 acted on belief alone") {
				t.Errorf("the two-owner column reads %q", got)
			}
		}
	}
	// Drawn, a1's lane has both marks and a3's none.
	rows := renderLanes([]laneRow{
		{label: "a1", cells: replicaCells(tl, 0, 0, len(tl.items), 1)},
		{label: "a3", cells: replicaCells(tl, 1, 0, len(tl.items), 1)},
	}, 80)
	if n := countRune(rows[0], '!'); n != 2 {
		t.Errorf("a1's lane %q has %d !, want 2", rows[0], n)
	}
	if n := countRune(rows[1], '!'); n != 0 {
		t.Errorf("a3's lane %q has %d !, want none: etcd held its key", rows[1], n)
	}
}

// TestTwoOwnersNeitherHeld: when etcd held neither owner's key, both are
// marked; without the monitor's event the act's own column is.
func TestTwoOwnersNeitherHeld(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	events := []history.Event{
		{At: ms(10), Kind: history.Acquired, Replica: "a1", Token: 5},
		{At: ms(20), Kind: history.Acquired, Replica: "a2", Token: 6},
	}
	tl := buildTimeline(events, []string{"a1", "a2"}, nil, false)
	last := len(tl.items) - 1
	if got := violatedLanes(tl, last); fmt.Sprint(got) != "[a1 a2]" || tl.events[tl.items[last].first].Replica != "a2" {
		t.Errorf("marks at a2's take-over %v, want both owners", got)
	}
	if got := tl.eventWords(last); !strings.HasSuffix(got, "; etcd held neither's key") {
		t.Errorf("a2's take-over reads %q", got)
	}
	if got := violatedLanes(tl, 0); len(got) != 0 {
		t.Errorf("a1's take-over marked %v: one owner then", got)
	}
}

func countRune(s string, r rune) int {
	n := 0
	for _, c := range s {
		if c == r {
			n++
		}
	}
	return n
}

// TestOwnRulesMarkTheirViolation: a run judged by rules of its own (a lab
// run) marks only the violation events it has, on the replica each names:
// the generic checker's two owners at once (a1 believing on while a2
// took over, its writes refused) is no mark there.
func TestOwnRulesMarkTheirViolation(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	events := []history.Event{
		{At: ms(10), Kind: history.Acquired, Replica: "a1", Token: 5},
		{At: ms(20), Kind: history.Acquired, Replica: "a2", Token: 6},
		{At: ms(30), Kind: history.WriteRejected, Replica: "a1", Token: 5},
	}
	tl := buildTimeline(events, []string{"a1", "a2"}, nil, true)
	for i := range tl.items {
		if got := violatedLanes(tl, i); len(got) != 0 {
			t.Errorf("item %d marked %v in a run held by its own rules", i, got)
		}
	}
	named := append(slices.Clone(events), history.Event{At: ms(40), Kind: history.InvariantViolated, Replica: "a2", Text: "Left-behind at 0.04 s: a2's ..."})
	tl = buildTimeline(named, []string{"a1", "a2"}, nil, true)
	last := len(tl.items) - 1
	if got := violatedLanes(tl, last); fmt.Sprint(got) != "[a2]" {
		t.Errorf("the named violation marks %v, want a2", got)
	}
	for i := range last {
		if got := violatedLanes(tl, i); len(got) != 0 {
			t.Errorf("item %d marked %v before the named violation", i, got)
		}
	}
}
