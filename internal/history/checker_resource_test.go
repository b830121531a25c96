package history

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Small histories built by hand: the key watch's changes, the replicas'
// Acquired events and their reports of what their requests changed or
// what their watches woke them for.

func put(rev int64, key, value string, create int64) Event {
	k := StoreKey{Key: key, Value: value, CreateRevision: create, ModRevision: rev, Version: 1}
	return Event{At: time.Duration(rev) * time.Millisecond, Kind: KeyChanged, Facts: &Facts{Op: "put", Key: key, Revision: rev, Succeeded: true, Held: &k}}
}

func del(rev int64, key string) Event {
	k := StoreKey{Key: key, ModRevision: rev}
	return Event{At: time.Duration(rev) * time.Millisecond, Kind: KeyChanged, Facts: &Facts{Op: "delete", Key: key, Revision: rev, Deleted: 1, Succeeded: true, Held: &k}}
}

func took(replica string, token int64) Event {
	return Event{At: time.Duration(token) * time.Millisecond, Kind: Acquired, Replica: replica, Token: token}
}

// changed is a replica's write event whose requests changed etcd at revs.
func changed(replica string, kind Kind, revs ...int64) Event {
	return Event{At: time.Duration(revs[0]) * time.Millisecond, Kind: kind, Replica: replica, Facts: &Facts{Op: "write", Key: "data", Changed: revs}}
}

// valueWriter names the writer from values "r2 token 10".
func valueWriter(k StoreKey) string {
	who, _, _ := strings.Cut(k.Value, " ")
	return who
}

// The owner r2 holds the lock (token 10) and wrote the data at 11; r1,
// whose turn ended long ago, changes it at 12.
func ownerWrote() []Event {
	return []Event{
		put(10, "lock", "r2", 10), took("r2", 10),
		put(11, "data", "r2 token 10", 11), changed("r2", WriteAccepted, 11),
	}
}

func TestClobbersDeleteByAnotherReplica(t *testing.T) {
	events := append(ownerWrote(), changed("r1", WriteRejected, 12), del(12, "data"))
	cs := Clobbers(events, "lock", "data", valueWriter)
	if len(cs) != 1 {
		t.Fatalf("want one clobber, got %+v", cs)
	}
	c := cs[0]
	if !c.Deleted || c.Owner != "r2" || c.Token != 10 || c.Actor != "r1" || c.Revision != 12 || c.By.Kind != WriteRejected || c.Written.Facts.Revision != 11 {
		t.Fatalf("wrong clobber: %+v", c)
	}
}

func TestClobbersOverwriteByAnotherReplica(t *testing.T) {
	// The value put names nobody: the writer is known by its report.
	events := append(ownerWrote(), put(12, "data", "", 11), changed("r1", WriteRejected, 12))
	cs := Clobbers(events, "lock", "data", valueWriter)
	if len(cs) != 1 || cs[0].Deleted || cs[0].Actor != "r1" || cs[0].Owner != "r2" {
		t.Fatalf("want r1 overwriting r2's data, got %+v", cs)
	}
}

func TestClobbersWriterNamedByValueWhenItsAnswerWasLost(t *testing.T) {
	// r2's put was not reported (its answer lost): its value names it.
	events := []Event{put(10, "lock", "r2", 10), took("r2", 10), put(11, "data", "r2 token 10", 11),
		changed("r1", WriteRejected, 12), del(12, "data")}
	if cs := Clobbers(events, "lock", "data", valueWriter); len(cs) != 1 || cs[0].Owner != "r2" {
		t.Fatalf("want r2's data deleted by r1, got %+v", cs)
	}
	if cs := Clobbers(events, "lock", "data", nil); len(cs) != 0 {
		t.Fatalf("with no way to name the writer, nothing can be said: %+v", cs)
	}
}

func TestClobbersNotWhatTheCheckerCannotShow(t *testing.T) {
	cases := map[string][]Event{
		// The owner may change its own data.
		"owner's own delete":    append(ownerWrote(), changed("r2", WriteAccepted, 12), del(12, "data")),
		"owner's own overwrite": append(ownerWrote(), put(12, "data", "r2 token 10", 11), changed("r2", WriteAccepted, 12)),
		// Nobody reported the delete: the checker cannot say who did it.
		"delete nobody reported": append(ownerWrote(), del(12, "data")),
		// The lock moved on: the data is a past owner's, not the
		// current owner's.
		"lock released first": append(ownerWrote(), del(12, "lock"), put(13, "lock", "r3", 13), took("r3", 13),
			changed("r1", WriteRejected, 14), del(14, "data")),
		// Data put while the lock was not its writer's is nobody's to
		// keep (a stale write, which another rule names).
		"stale data": {put(10, "lock", "r2", 10), took("r2", 10), took("r1", 5), put(11, "data", "r1 token 5", 11),
			changed("r1", WriteAccepted, 11), changed("r3", WriteRejected, 12), del(12, "data")},
		// A report of another key's revision does not name the
		// deleter of this one.
		"other revision": append(ownerWrote(), changed("r1", WriteRejected, 13), del(12, "data")),
	}
	for name, events := range cases {
		if cs := Clobbers(events, "lock", "data", valueWriter); len(cs) != 0 {
			t.Errorf("%s: want no clobber, got %+v", name, cs)
		}
	}
}

func TestClobbersAfterTheOwnerWroteAgain(t *testing.T) {
	// r2 writes twice; r1 overwrites, then r2 writes again and r3
	// deletes: two clobbers, each of the owner's latest value.
	events := append(ownerWrote(),
		put(12, "data", "r1 token 5", 11), changed("r1", WriteRejected, 12),
		put(13, "data", "r2 token 10", 11), changed("r2", WriteAccepted, 13),
		changed("r3", WriteRejected, 14), del(14, "data"))
	cs := Clobbers(events, "lock", "data", valueWriter)
	if len(cs) != 2 || cs[0].Actor != "r1" || cs[1].Actor != "r3" || cs[1].Written.Facts.Revision != 13 {
		t.Fatalf("want r1's overwrite and r3's delete, got %+v", cs)
	}
}

// The line: r1's key a (created at 10, the holder), r2's b (11), r3's c
// (12).
func line() ([]Event, map[string]string) {
	return []Event{put(10, "q/a", "", 10), put(11, "q/b", "", 11), put(12, "q/c", "", 12)},
		map[string]string{"q/a": "r1", "q/b": "r2", "q/c": "r3", "q/d": "r4"}
}

func woke(replica, key string, rev int64) Event {
	return Event{At: time.Duration(rev)*time.Millisecond + time.Duration(len(replica)), Kind: Note, Replica: replica,
		Facts: &Facts{Op: OpWoken, Key: key, Revision: rev, Succeeded: true}}
}

func TestHerdEveryWaiterWoken(t *testing.T) {
	events, owners := line()
	events = append(events, del(13, "q/a"), woke("r2", "q/a", 13), woke("r3", "q/a", 13))
	hs := Herds(events, "q/", owners)
	if len(hs) != 1 {
		t.Fatalf("want one herd, got %+v", hs)
	}
	h := hs[0]
	if h.Key != "q/a" || h.Owner != "r1" || h.Next != "r2" || h.Line != 2 || !slices.Equal(h.Woken, []string{"r2", "r3"}) || !slices.Equal(h.Needless, []string{"r3"}) || len(h.Events) != 2 {
		t.Fatalf("wrong herd: %+v", h)
	}
	if h.At != events[len(events)-1].At {
		t.Fatalf("the herd is at r3's wake-up, not %v", h.At)
	}
}

func TestHerdNotForTheNextInLine(t *testing.T) {
	events, owners := line()
	cases := map[string][]Event{
		"only the next woken": {del(13, "q/a"), woke("r2", "q/a", 13)},
		// r2 left first: r3 is next behind a now.
		"the next after a leaver": {del(13, "q/b"), woke("r3", "q/b", 13), del(14, "q/a"), woke("r3", "q/a", 14)},
		// A watch on one's own key, and a replica with no place in line
		// (its key gone, or never there), wake nobody needlessly.
		"own key":     {del(13, "q/a"), woke("r1", "q/a", 13), woke("r2", "q/a", 13)},
		"not in line": {del(13, "q/a"), woke("r2", "q/a", 13), woke("r4", "q/a", 13)},
		// r2's key ran out while it was cut off, then a went: r2's late
		// wake-up is not a waiter's.
		"key gone": {del(13, "q/b"), woke("r3", "q/b", 13), del(14, "q/a"), woke("r3", "q/a", 14), woke("r2", "q/a", 14)},
		// Puts are not releases, and a delete the watch never saw is
		// not judged.
		"never seen": {woke("r3", "q/x", 13)},
	}
	for name, more := range cases {
		if hs := Herds(append(slices.Clone(events), more...), "q/", owners); len(hs) != 0 {
			t.Errorf("%s: want no herd, got %+v", name, hs)
		}
	}
}

func TestHerdRestartedReplicaWithTwoKeys(t *testing.T) {
	// r3 restarted: its old key o (created at 9) waits out its lease
	// ahead of a, its new key c is directly behind a.
	events, owners := line()
	owners["q/o"] = "r3"
	events = append([]Event{put(9, "q/o", "", 9)}, events...)
	events = append(events, del(13, "q/b"), woke("r3", "q/b", 13), del(14, "q/a"), woke("r3", "q/a", 14))
	if hs := Herds(events, "q/", owners); len(hs) != 0 {
		t.Fatalf("r3's new key is directly behind a: no herd, got %+v", hs)
	}
	// Another queue's keys whose names begin with the prefix's are not
	// this line's.
	events = append(events, put(15, "q2/z", "", 15), woke("r2", "q2/z", 16))
	if hs := Herds(events, "q/", owners); len(hs) != 0 {
		t.Fatalf("another queue's key: %+v", hs)
	}
}

func TestHerdWaiterAheadWokenIsNotJudged(t *testing.T) {
	// r3 leaves the line (c deleted) and r2, ahead of it, is told of it:
	// a watch on a key name the same lease used again for a place
	// behind r2 looks the same, so it is not called a herd.
	events, owners := line()
	events = append(events, del(13, "q/c"), woke("r2", "q/c", 13))
	if hs := Herds(events, "q/", owners); len(hs) != 0 {
		t.Fatalf("a waiter ahead of the key: no herd, got %+v", hs)
	}
	// r1 holds (a), r2 waits (b), r3 (c) and r4 (d): a's delete reaches
	// r2 and r4, b's delete reaches r3 and r4: two herds, r4 the needless
	// one in each.
	events, owners = line()
	events = append(events, put(13, "q/d", "", 13), del(14, "q/a"), woke("r2", "q/a", 14), woke("r4", "q/a", 14),
		del(15, "q/b"), woke("r3", "q/b", 15), woke("r4", "q/b", 15))
	hs := Herds(events, "q/", owners)
	if len(hs) != 2 || !slices.Equal(hs[0].Needless, []string{"r4"}) || hs[0].Next != "r2" || hs[0].Line != 3 || hs[1].Next != "r3" || hs[1].Line != 2 {
		t.Fatalf("want two herds with r4 woken needlessly: %+v", hs)
	}
}
