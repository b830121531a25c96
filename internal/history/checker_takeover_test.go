package history

import "testing"

// Owner keys whose value is the holder's name, as lab 09's shard keys.
func nameHolder(k StoreKey) string { return k.Value }

// deleted is a replica's report that its request deleted keys at rev.
func deleted(replica string, rev int64) Event {
	return Event{Kind: Note, Replica: replica, Facts: &Facts{Op: "deleted", Changed: []int64{rev}}}
}

func TestTakeoversDeleteOfAnothersKey(t *testing.T) {
	events := []Event{
		put(10, "s/000", "r1", 10),
		deleted("r2", 11), del(11, "s/000"),
	}
	ts := Takeovers(events, "s/", nameHolder)
	if len(ts) != 1 {
		t.Fatalf("want one takeover, got %+v", ts)
	}
	k := ts[0]
	if !k.Deleted || k.Holder != "r1" || k.Actor != "r2" || k.Token != 10 || k.Revision != 11 || k.By.Replica != "r2" || k.Held.Facts.Revision != 10 {
		t.Fatalf("wrong takeover: %+v", k)
	}
}

func TestTakeoversPutOverAnothersKey(t *testing.T) {
	// Nobody reported the put: the value it wrote names the writer.
	events := []Event{put(10, "s/003", "r1", 10), put(12, "s/003", "r3", 10)}
	ts := Takeovers(events, "s/", nameHolder)
	if len(ts) != 1 || ts[0].Deleted || ts[0].Holder != "r1" || ts[0].Actor != "r3" || ts[0].Change.Facts.Revision != 12 {
		t.Fatalf("want r3 writing over r1's key, got %+v", ts)
	}
}

func TestTakeoversLeaveOwnAndFreeKeysAlone(t *testing.T) {
	events := []Event{
		// r1 claims a free key, writes it again, deletes it itself.
		put(10, "s/000", "r1", 10), put(11, "s/000", "r1", 10),
		deleted("r1", 12), del(12, "s/000"),
		// r2 claims it once free; its lease ends (nobody reports the
		// delete), and r3 claims it after.
		put(13, "s/000", "r2", 13), del(14, "s/000"), put(15, "s/000", "r3", 15),
		// A key outside the prefix, deleted by another, is not judged.
		put(16, "other", "r1", 16), deleted("r2", 17), del(17, "other"),
	}
	if ts := Takeovers(events, "s/", nameHolder); len(ts) != 0 {
		t.Fatalf("no takeover here, got %+v", ts)
	}
}

func TestTakeoversNeedAHolderAndAnActor(t *testing.T) {
	// A holder nobody can name (holderOf says "") and a delete nobody
	// reported say nothing.
	events := []Event{put(10, "s/000", "", 10), deleted("r2", 11), del(11, "s/000"),
		put(12, "s/001", "r1", 12), del(13, "s/001")}
	if ts := Takeovers(events, "s/", nameHolder); len(ts) != 0 {
		t.Fatalf("nothing can be shown, got %+v", ts)
	}
}
