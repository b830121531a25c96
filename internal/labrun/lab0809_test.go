package labrun

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// The judging of lab 08's and 09's runs, on histories written by hand:
// what etcd's watch held at a revision decides, not the order in which
// the replicas' reports arrived.

func watchPut(at time.Duration, key, value string, create, rev int64) history.Event {
	k := history.StoreKey{Key: key, Value: value, CreateRevision: create, ModRevision: rev, Version: 1}
	return history.Event{At: at, Kind: history.KeyChanged, Facts: &history.Facts{Op: "put", Key: key, Revision: rev, Succeeded: true, Held: &k}}
}

func watchDel(at time.Duration, key, value string, create, rev int64) history.Event {
	prev := history.StoreKey{Key: key, Value: value, CreateRevision: create}
	k := history.StoreKey{Key: key, ModRevision: rev}
	return history.Event{At: at, Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: key, Revision: rev, Succeeded: true, Deleted: 1, Prev: []history.StoreKey{prev}, Held: &k}}
}

func herdTurn(at time.Duration, who, key string, token, rev int64) history.Event {
	return history.Event{At: at, Kind: history.Acquired, Replica: who, Token: token, Facts: &history.Facts{Op: "turn", Key: key, Revision: rev, Succeeded: true}}
}

func TestHerdOneHolder(t *testing.T) {
	line := []history.Event{
		watchPut(0, "queue/a", "", 2, 2),
		watchPut(0, "queue/b", "", 3, 3),
	}
	// b's report arrives before the watch shows a's delete: b read at
	// revision 4, when a was gone, so the turn was b's.
	late := append(append([]history.Event{}, line...), herdTurn(time.Second, "r2", "queue/b", 3, 4), watchDel(time.Second, "queue/a", "", 2, 4))
	if ok, s := said(herdOneHolder(&history.Findings{Events: late})); !ok {
		t.Fatalf("a turn read after the delete: %s", s)
	}
	// b read at revision 3, with a still in line.
	early := append(append([]history.Event{}, line...), herdTurn(time.Second, "r2", "queue/b", 3, 3))
	if ok, s := said(herdOneHolder(&history.Findings{Events: early})); ok || !strings.HasPrefix(s, "two-holders at") {
		t.Fatalf("a turn while the older key was held: %v %s", ok, s)
	}
	wrong := append(append([]history.Event{}, line...), herdTurn(time.Second, "r1", "queue/a", 9, 3))
	if ok, s := said(herdOneHolder(&history.Findings{Events: wrong})); ok || !strings.HasPrefix(s, "wrong-token at") {
		t.Fatalf("a token that is not the key's CreateRevision: %v %s", ok, s)
	}
}

func TestHerdTicketKept(t *testing.T) {
	lost := func(rev int64) history.Event {
		return history.Event{At: time.Second, Kind: history.Note, Replica: "r2", Facts: &history.Facts{Op: "ticket-lost", Key: "queue/b", Revision: rev}}
	}
	h := []history.Event{watchPut(0, "queue/b", "", 3, 3), watchDel(2*time.Second, "queue/b", "", 3, 5), lost(5)}
	if ok, s := said(herdTicketKept(&history.Findings{Events: h})); !ok {
		t.Fatalf("ErrTicketLost once the key was gone: %s", s)
	}
	h = []history.Event{watchPut(0, "queue/b", "", 3, 3), lost(4)}
	if ok, s := said(herdTicketKept(&history.Findings{Events: h})); ok || !strings.HasPrefix(s, "ticket-lost-but-held at") {
		t.Fatalf("ErrTicketLost with the key held: %v %s", ok, s)
	}
}

func TestShardsStaleCommit(t *testing.T) {
	commit := func(who string, token int64, offset float64) history.Event {
		return history.Event{At: time.Second, Kind: history.Note, Replica: who, Value: offset, Facts: &history.Facts{Op: "commit", Key: "group/offsets/000", Token: token}}
	}
	h := []history.Event{
		watchPut(0, "group/shards/000", "r1", 2, 2),
		watchPut(0, "group/offsets/000", "11", 3, 3),
		watchDel(time.Second, "group/shards/000", "r1", 2, 4),
		watchPut(time.Second, "group/shards/000", "r2", 5, 5),
		watchPut(time.Second, "group/offsets/000", "21", 3, 6),
		commit("r1", 2, 11),
		commit("r2", 5, 21),
	}
	if ok, s := said(shardsStaleCommit(&history.Findings{Events: h})); !ok {
		t.Fatalf("each commit with the token of its time: %s", s)
	}
	h = append(h, watchPut(2*time.Second, "group/offsets/000", "12", 3, 7), commit("r1", 2, 12))
	if ok, s := said(shardsStaleCommit(&history.Findings{Events: h})); ok || !strings.HasPrefix(s, "stale-commit at") || !strings.Contains(s, "r1's offset 12") {
		t.Fatalf("r1's commit after r2 took the shard: %v %s", ok, s)
	}
}

// A turn is judged also at WaitTurn's own last read: given on a read at
// which etcd no longer held the waiter's key, it is a turn without a
// place in line, whoever holds the oldest key then.
func TestHerdTurnWithoutKey(t *testing.T) {
	read := func(rev int64) history.Event {
		return history.Event{At: 5 * time.Second, Kind: history.Note, Replica: "r1", Facts: &history.Facts{Op: "turn-read", Key: "queue/a", Revision: rev, Succeeded: true}}
	}
	line := []history.Event{
		watchPut(0, "queue/a", "", 2, 2),
		watchDel(2*time.Second, "queue/a", "", 2, 5), // r1's lease ran out
		watchPut(3*time.Second, "queue/c", "", 6, 6),
	}
	gone := append(append([]history.Event{}, line...), read(7), herdTurn(5*time.Second, "r1", "queue/a", 2, 8))
	if ok, s := said(herdOneHolder(&history.Findings{Events: gone})); ok || !strings.HasPrefix(s, "turn-without-key at") || !strings.Contains(s, "deleted at revision 5") || !strings.Contains(s, "queue/c") {
		t.Fatalf("a turn on a read after the key went: %v %s", ok, s)
	}
	held := append(append([]history.Event{}, line[:1]...), read(3), herdTurn(time.Second, "r1", "queue/a", 2, 4))
	if ok, s := said(herdOneHolder(&history.Findings{Events: held})); !ok {
		t.Fatalf("a turn on a read that showed the key: %s", s)
	}
}

// A line in which nobody ever got a turn names who waited, from the
// first join.
func TestHerdNoTurnNamesTheWaiters(t *testing.T) {
	join := func(at time.Duration, who string) history.Event {
		return history.Event{At: at, Kind: history.Note, Replica: who, Facts: &history.Facts{Op: "enqueue", Key: "queue/" + who, Succeeded: true}}
	}
	h := []history.Event{join(time.Second, "r1"), join(time.Second, "r2"), {At: 20 * time.Second, Kind: history.Phase, Text: labStopPhase}}
	ok, s := said(herdTurnsGoOn(&history.Findings{Events: h, Params: history.Params{TTL: 2}}))
	if ok || !strings.HasPrefix(s, "missed-turn at 7.00 s") || !strings.Contains(s, "r1, r2") {
		t.Fatalf("nobody's turn in 19 s: %v %s", ok, s)
	}
}

// TestShardsOwnedAgainThroughALeaderMove: a shard that stands free for
// 5.9 s is unowned work, unless etcd's raft leader moved then, when a
// claim can wait out etcd's request timeout (leaderMoveGrace).
func TestShardsOwnedAgainThroughALeaderMove(t *testing.T) {
	var events []history.Event
	events = append(events, history.Event{At: 0, Kind: history.Note, Replica: "r1", Text: lab09Started + " (10 shards)"})
	for i := range lab09ShardCount {
		events = append(events, watchPut(10*time.Millisecond, fmt.Sprintf("%s%03d", lab09Shards, i), "r1", int64(i+2), int64(i+2)))
	}
	key := lab09Shards + "003"
	freed := append(events, watchDel(150*time.Millisecond, key, "r1", 5, 20), watchPut(6050*time.Millisecond, key, "r2", 21, 21))
	f := &history.Findings{Events: freed, Params: history.Params{TTL: 2}}
	if ok, s := said(shardsOwnedAgain(f)); ok || !strings.Contains(s, "unowned at 4.15 s: shard 003") {
		t.Fatalf("a shard free for 5.9 s with no leader move: %v, %s", ok, s)
	}
	moved := append(append([]history.Event{}, events...), history.Event{At: 110 * time.Millisecond, Kind: history.LeaderMoved, Replica: "m2"})
	moved = append(moved, freed[len(events):]...)
	f = &history.Findings{Events: moved, Params: history.Params{TTL: 2}}
	if ok, s := said(shardsOwnedAgain(f)); !ok {
		t.Fatalf("a shard free for 5.9 s across a raft leader move: %s", s)
	}
	late := append(append([]history.Event{}, moved[:len(moved)-1]...), watchPut(10200*time.Millisecond, key, "r2", 21, 21))
	f = &history.Findings{Events: late, Params: history.Params{TTL: 2}}
	if ok, s := said(shardsOwnedAgain(f)); ok || !strings.Contains(s, "for etcd's raft leader moving at 0.11 s") {
		t.Fatalf("a shard free for 10 s across a raft leader move: %v, %s", ok, s)
	}
}

// TestShardsOneOwnerByTheClientsDeadline: a worker may list a shard past
// etcd's deletion of its key for as long as its etcd client's own rule
// kept the lease alive: before etcd answered any keep-alive, the trust
// from the first KeepAlive call; after, a TTL from the last answer.
func TestShardsOneOwnerByTheClientsDeadline(t *testing.T) {
	const lease = 0x10
	key := lab09Shards + "003"
	note := func(at time.Duration, op string) history.Event {
		return history.Event{At: at, Kind: history.Note, Replica: "r1", Facts: &history.Facts{Op: op, Key: key, Token: 5, Succeeded: true}}
	}
	del := watchDel(2*time.Second, key, "r1", 5, 9)
	del.Facts.Prev[0].Lease = lease
	start := history.Event{At: 50 * time.Millisecond, Kind: history.Note, Replica: "r1", Value: 4, Facts: &history.Facts{Op: "keepalive-start", Lease: lease, Succeeded: true}}
	answer := history.Event{At: 200 * time.Millisecond, Kind: history.LeaseRenewed, Replica: "r1", TTL: 2, Facts: &history.Facts{Op: "keepalive", Lease: lease, GrantedTTL: 2, Succeeded: true}}
	judge := func(events ...history.Event) (bool, string) {
		slices.SortStableFunc(events, func(a, b history.Event) int { return cmp.Compare(a.At, b.At) })
		return said(shardsOneOwner(&history.Findings{Events: events, Params: history.Params{TTL: 2}}))
	}
	if ok, s := judge(start, note(100*time.Millisecond, "own"), del, note(4500*time.Millisecond, "disown")); !ok || !strings.Contains(s, "r1 listed shards 003 up to 2.5 s") || !strings.Contains(s, "until 4.05 s") {
		t.Fatalf("no keep-alive answered: the client trusted the lease until 4.05 s, so 4.5 s is in time: %v, %s", ok, s)
	}
	if ok, s := judge(start, note(100*time.Millisecond, "own"), del, note(6500*time.Millisecond, "disown")); ok || !strings.Contains(s, "two-owners at 6.05 s") {
		t.Fatalf("listed 2.45 s past the client's own deadline: %v, %s", ok, s)
	}
	if ok, s := judge(start, note(100*time.Millisecond, "own"), answer, del, note(4500*time.Millisecond, "disown")); ok || !strings.Contains(s, "two-owners at 4.20 s") || !strings.Contains(s, "last answer") {
		t.Fatalf("an answer at 0.2 s (TTL 2 s) ends the client's trust at 2.2 s: %v, %s", ok, s)
	}
	if ok, s := judge(note(100*time.Millisecond, "own"), del, note(4500*time.Millisecond, "disown")); ok || !strings.Contains(s, "two-owners at 4.00 s") {
		t.Fatalf("nothing known of the lease's keep-alives: %v, %s", ok, s)
	}
}

// TestShardsFairShare: a member that joins gets its share soon, from
// whoever held too many; a worker that never saw the join (and so gave
// nothing back) leaves the shares unfair while nothing else changes.
func TestShardsFairShare(t *testing.T) {
	member := func(at time.Duration, who string, lease int64, rev int64) history.Event {
		e := watchPut(at, lab09Workers+who, "", rev, rev)
		e.Facts.Held.Lease = lease
		return e
	}
	shard := func(i int) string { return fmt.Sprintf("%s%03d", lab09Shards, i) }
	events := []history.Event{member(0, "r1", 0x1, 2)}
	for i := range lab09ShardCount {
		events = append(events, watchPut(10*time.Millisecond, shard(i), "r1", int64(i+3), int64(i+3)))
	}
	events = append(events, member(time.Second, "r2", 0x2, 20))
	stop := history.Event{At: 10 * time.Second, Kind: history.Phase, Text: labStopPhase}
	params := history.Params{TTL: 2}

	ignored := append(append([]history.Event{}, events...), stop)
	ok, s := said(shardsFairShare(&history.Findings{Events: ignored, Params: params}))
	if ok || !strings.HasPrefix(s, "unbalanced at 5.00 s") || !strings.Contains(s, "r1 10, r2 0") || !strings.Contains(s, "r1 5, r2 5") {
		t.Fatalf("a join nobody acted on: %v %s", ok, s)
	}
	balanced := append([]history.Event{}, events...)
	for i := 5; i < lab09ShardCount; i++ {
		balanced = append(balanced, watchDel(1010*time.Millisecond, shard(i), "r1", int64(i+3), int64(20+i)))
	}
	for i := 5; i < lab09ShardCount; i++ {
		// r2's claims: the value is not its name, the lease is its member key's.
		e := watchPut(1020*time.Millisecond, shard(i), "worker-two", int64(30+i), int64(30+i))
		e.Facts.Held.Lease = 0x2
		balanced = append(balanced, e)
	}
	balanced = append(balanced, stop)
	if ok, s := said(shardsFairShare(&history.Findings{Events: balanced, Params: params})); !ok {
		t.Fatalf("r1 gave back five and r2 took them: %s", s)
	}
	// Unfair for a moment only (a shard given back and taken again).
	blip := append(append([]history.Event{}, balanced[:len(balanced)-1]...),
		watchDel(6*time.Second, shard(0), "r1", 3, 50), watchPut(6100*time.Millisecond, shard(0), "r1", 51, 51), stop)
	if ok, s := said(shardsFairShare(&history.Findings{Events: blip, Params: params})); !ok {
		t.Fatalf("a shard free for 0.1 s: %s", s)
	}
}
