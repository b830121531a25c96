package timeline

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/timeline/timelinetest"
)

// TestTimelineFolds: lease renewals, grants and key changes that leave
// etcd's holder as it was fold, with one owner's accepted writes, into
// one column between two events that matter; another writer's write (or
// the same writer's with another token) starts a new fold; a key change
// that gives etcd another holder is a column of its own; the script's
// waiting lines are left out.
func TestTimelineFolds(t *testing.T) {
	tl := buildTimeline(timelinetest.FencingEvents(), []string{"b1", "b2", "b3"}, nil, false)
	var got []string
	for i, it := range tl.items {
		e := tl.events[it.first]
		switch {
		case it.fold != nil:
			got = append(got, "fold("+foldText(it.fold)+")")
		case e.Kind == history.KeyChanged:
			got = append(got, "etcd:"+tl.holds[i].holder)
		default:
			got = append(got, string(e.Kind)+":"+e.Replica)
		}
	}
	want := []string{
		"part:", "phase:", "fold(1 lease granted)", "etcd:b1", "acquired:b1",
		"fold(8 writes accepted from b1 with token 6 · 8 lease renewals · 2 leases granted · 2 etcd key changes)",
		"phase:", "paused:b1", "fold(4 lease renewals)", "etcd:b3", "acquired:b3",
		"fold(7 writes accepted from b3 with token 7 · 7 lease renewals)",
		"phase:", "resumed:b1", "write-rejected:b1", "invariant-violated:b1",
		"fold(1 write accepted from b3 with token 7)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Another writer, then the first again with a new token: three folds.
	ev := func(r string, tok int64) history.Event {
		return history.Event{Kind: history.WriteAccepted, Replica: r, Token: tok}
	}
	tl = buildTimeline([]history.Event{ev("a", 1), ev("a", 1), ev("b", 2), ev("a", 3),
		{Kind: history.Waiting, Value: 1, Text: "the script waits"}, ev("a", 3)}, nil, nil, false)
	if len(tl.items) != 3 || tl.items[2].fold.counts[history.WriteAccepted] != 2 {
		t.Fatalf("writes by a, b, a (new token), a: %d items, want 3 (the last of 2 writes)", len(tl.items))
	}
}

// TestRetiredLaneEndsWhenItLeaves: a replica the run retired keeps its
// lane while it is in the run, quiet or not, until etcd deletes its key
// (or its own last event, whichever is later), and is gone after.
func TestRetiredLaneEndsWhenItLeaves(t *testing.T) {
	evs := timelinetest.FencingEvents()
	del := history.Event{At: 3300 * time.Millisecond, Kind: history.KeyChanged,
		Facts: &history.Facts{Op: "delete", Key: "election-1/694d7c1e5f2a9b07", Revision: 10,
			Held: &history.StoreKey{Key: "election-1/694d7c1e5f2a9b07", ModRevision: 10},
			Prev: []history.StoreKey{{Key: "election-1/694d7c1e5f2a9b07", Value: "b2"}}}}
	evs = append(evs, del, history.Event{At: 3400 * time.Millisecond, Kind: history.Phase, Text: "next variant"})
	tl := buildTimeline(evs, []string{"b1", "b2", "b3"}, map[string]bool{"b2": true}, false)
	n := len(tl.items)
	if s := tl.states[n-2][1]; s.gone {
		t.Fatal("b2 is gone before etcd deleted its key")
	}
	if s := tl.states[n-1][1]; !s.gone {
		t.Fatal("b2 is still in the run after etcd deleted its key and the run retired it")
	}
	if s := tl.states[n-1][2]; s.gone {
		t.Fatal("b3, not retired, left the lanes")
	}
}

// TestScrubbedWorker: a replica that claimed shards reads as a worker at
// the cursor, as its card does live.
func TestScrubbedWorker(t *testing.T) {
	tl := buildTimeline([]history.Event{
		{Kind: history.LeaseGranted, Replica: "w1", TTL: 2},
		{At: time.Millisecond, Kind: history.ShardClaimed, Replica: "w1", Text: "claimed shards/00"},
		{At: 2 * time.Millisecond, Kind: history.Crashed, Replica: "w1"},
	}, []string{"w1"}, nil, false)
	n := len(tl.items)
	if got := stateWord(tl.states[n-2][0], 0); got != "worker" {
		t.Errorf("after its claim: %q, want worker", got)
	}
	if got := stateWord(tl.states[n-1][0], 0); got != "crashed" {
		t.Errorf("after its crash: %q", got)
	}
}

// TestShardOwnerAgain: a lab 09 worker that gave all its shards up
// (stepped down) and claims some again is a worker again, not left
// stepped down, and one that never claimed any stays a follower.
func TestShardOwnerAgain(t *testing.T) {
	tl := buildTimeline([]history.Event{
		{Kind: history.Note, Replica: "r1", Text: "the lab's Worker.Run started"},
		{Kind: history.Note, Replica: "r2", Text: "the lab's Worker.Run started"},
		{At: time.Millisecond, Kind: history.ShardClaimed, Replica: "r1", Token: 5, Text: "owns shards [0 1]"},
		{At: 2 * time.Millisecond, Kind: history.SteppedDown, Replica: "r1", Text: "Owned() is empty: owns no shard"},
		{At: 3 * time.Millisecond, Kind: history.ShardClaimed, Replica: "r1", Token: 9, Text: "owns shards [3]"},
	}, []string{"r1", "r2"}, nil, false)
	n := len(tl.items)
	if got := stateWord(tl.states[n-1][0], 0); got != "worker" {
		t.Errorf("r1 after its second claim: %q, want worker", got)
	}
	if got := tl.states[n-1][1].role; got != history.RoleFollower && got != "" {
		t.Errorf("r2 never claimed a shard: %q", got)
	}
}

// TestHolderIsAReplica: etcd's holder comes from keys whose values name a
// replica; a change to keys that hold something else (lab 09's committed
// offsets, its members' empty keys) leaves it as it was.
func TestHolderIsAReplica(t *testing.T) {
	put := func(key, value string, rev int64) history.Event {
		k := history.StoreKey{Key: key, Value: value, CreateRevision: rev, ModRevision: rev}
		return history.Event{Kind: history.KeyChanged, Facts: &history.Facts{Op: "put", Key: key, Revision: rev, Held: &k}}
	}
	del := func(key, value string, rev int64) history.Event {
		k := history.StoreKey{Key: key, ModRevision: rev}
		return history.Event{Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: key, Revision: rev, Held: &k,
			Prev: []history.StoreKey{{Key: key, Value: value}}}}
	}
	events := []history.Event{
		put("group/shards/000", "r2", 5),
		put("group/offsets/000", "17961627026752", 6),
		put("group/workers/r1", "", 7),
		del("group/workers/r1", "", 8),
		del("group/shards/000", "r2", 9),
	}
	tl := buildTimeline(events, []string{"r1", "r2"}, nil, false)
	var got []string
	for i := range tl.items {
		got = append(got, tl.holds[i].holder)
	}
	// The three changes between fold into one item: etcd's holder stayed.
	if want := []string{"r2", "r2", ""}; !slices.Equal(got, want) {
		t.Fatalf("etcd's holder after each change: %q, want %q", got, want)
	}
}
