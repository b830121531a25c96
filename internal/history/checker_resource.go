package history

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// What the resource saw: the checker's judgement of what was done to the
// data a lock guards and of whom a release woke, from two records that
// neither side can fake for the other. The key watch (KeyChanged) says
// what etcd did at each revision: a put or a delete of which key, over
// which value. A replica's own reports say which of those were its
// doing: the revisions at which its requests changed etcd, read from
// etcd's answers (Facts.Changed), and the deletes its code's own watch
// delivered to it (OpWoken notes). A write's token or a learner's
// returned revision is never taken as proof of who did what.

// OpWoken is the Facts.Op of a replica's note that its code's own watch
// delivered a key's delete to it (Key, at Revision): a wake-up.
const OpWoken = "woken"

// Clobber is data that a lock's holder wrote under its token, deleted
// or overwritten by another replica while the lock was still that
// holder's (the same CreateRevision): the resource lost the current
// owner's work to someone who was not the owner.
type Clobber struct {
	At       time.Duration // when the key watch saw the change
	Key      string        // the data's key
	Revision int64         // the change's revision
	Deleted  bool          // deleted; false: overwritten
	Owner    string        // the lock's holder, whose data it was
	Token    int64         // the holder's token: the lock's CreateRevision
	Actor    string        // the replica whose request made the change
	Written  Event         // the key watch's put of the owner's data
	Change   Event         // the key watch's change that took it away
	// By is the actor's event that reported the change among its own
	// (Facts.Changed), or the change itself when only the value it
	// put names the actor.
	By Event
}

// Clobbers finds every change of the key data, by the key watch, that a
// replica other than the lock's holder made while data held a value the
// holder had put under its token and the key lock was still the one
// created at that token. Who made a change is the replica that reported
// its revision in Facts.Changed; for a put nobody reported (its answer
// was lost), writerOf, if set, may name the writer from the value put
// ("" when it cannot). The holder of a token is the replica whose
// Acquired event carries it. Changes nobody can be named for are not
// judged: the checker says nothing it cannot show.
func Clobbers(events []Event, lock, data string, writerOf func(StoreKey) string) []Clobber {
	holder := map[int64]string{}
	by := map[int64]Event{}
	for _, e := range events {
		if e.Kind == Acquired && e.Token > 0 && e.Replica != "" {
			holder[e.Token] = e.Replica
		}
		if e.Facts != nil && e.Replica != "" && e.Kind != KeyChanged {
			for _, rev := range e.Facts.Changed {
				if _, ok := by[rev]; !ok {
					by[rev] = e
				}
			}
		}
	}
	locks, changes := watched(events, lock), watched(events, data)
	var out []Clobber
	var owned *Clobber // the holder's data the key holds, if it does
	for _, c := range changes {
		rev := c.Facts.Revision
		actor, report := "", c
		if e, ok := by[rev]; ok {
			actor, report = e.Replica, e
		} else if c.Facts.Op != "delete" && writerOf != nil {
			actor = writerOf(*c.Facts.Held)
		}
		l, held := keyAt(locks, rev-1)
		if owned != nil && held && l.CreateRevision == owned.Token && actor != "" && actor != owned.Owner {
			k := *owned
			k.At, k.Revision, k.Deleted, k.Actor, k.Change, k.By = c.At, rev, c.Facts.Op == "delete", actor, c, report
			out = append(out, k)
		}
		owned = nil
		if c.Facts.Op != "delete" && actor != "" && held && holder[l.CreateRevision] == actor {
			owned = &Clobber{Key: data, Owner: actor, Token: l.CreateRevision, Written: c}
		}
	}
	return out
}

// watched is key's KeyChanged events with what the key held, in
// revision order.
func watched(events []Event, key string) []Event {
	var out []Event
	for _, e := range events {
		if e.Kind == KeyChanged && e.Facts != nil && e.Facts.Held != nil && e.Facts.Key == key {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Facts.Revision < out[j].Facts.Revision })
	return out
}

// keyAt is the key as etcd held it once revision rev was applied, by its
// changes (watched), and false when it did not exist then.
func keyAt(changes []Event, rev int64) (StoreKey, bool) {
	var k StoreKey
	ok := false
	for _, e := range changes {
		if e.Facts.Revision > rev {
			break
		}
		ok = e.Facts.Op != "delete"
		k = *e.Facts.Held
	}
	return k, ok
}

// Herd is a key's delete that woke, through their own watches, waiters
// further back in line than the one directly behind it: one release
// stirred the line where it needed to wake one.
type Herd struct {
	At       time.Duration // the first needless wake-up's report
	Key      string        // the key deleted
	Revision int64         // the delete's revision
	Owner    string        // whose key it was ("" when no one said)
	// Next is the waiter directly behind the key: the only one its
	// delete had to wake ("" when nobody waited behind it).
	Next string
	// Woken are the waiters in line it woke, in the order they said so;
	// Needless those of them further back than directly behind it.
	Woken, Needless []string
	// Line is how many replicas were in line besides the key's owner,
	// ahead of the key or behind it, by the key watch just before the
	// delete.
	Line   int
	Events []Event // the wake-ups (OpWoken notes), in order
}

// Herds finds, for each delete of a key under prefix that some replica's
// code was told of by its own watch (an OpWoken note), the waiters in
// line just before it by the key watch (owners names the replica each
// key is its place in line), and returns the deletes that woke a waiter
// whose key was behind the deleted one, but not directly. A replica told of
// its own key's delete, or with no key in line then, is not a waiter
// woken: only a place in line makes a wake-up needless or not.
func Herds(events []Event, prefix string, owners map[string]string) []Herd {
	var line []Event
	type wake struct {
		key string
		rev int64
	}
	var order []wake
	woke := map[wake][]Event{}
	for _, e := range events {
		switch {
		case e.Kind == KeyChanged && e.Facts != nil && e.Facts.Held != nil && strings.HasPrefix(e.Facts.Key, prefix):
			line = append(line, e)
		case e.Kind == Note && e.Facts != nil && e.Facts.Op == OpWoken && e.Replica != "" && strings.HasPrefix(e.Facts.Key, prefix):
			w := wake{e.Facts.Key, e.Facts.Revision}
			if woke[w] == nil {
				order = append(order, w)
			}
			woke[w] = append(woke[w], e)
		}
	}
	sort.SliceStable(line, func(i, j int) bool { return line[i].Facts.Revision < line[j].Facts.Revision })
	var out []Herd
	for _, w := range order {
		if h, ok := herdAt(line, w.key, w.rev, woke[w], owners); ok {
			out = append(out, h)
		}
	}
	return out
}

// herdAt judges the wake-ups of key's delete at rev against the line as
// the key watch had it just before (line: the prefix's changes in
// revision order).
func herdAt(line []Event, key string, rev int64, wakes []Event, owners map[string]string) (Herd, bool) {
	held := map[string]StoreKey{}
	for _, e := range line {
		if e.Facts.Revision >= rev {
			break
		}
		if e.Facts.Op == "delete" {
			delete(held, e.Facts.Key)
		} else {
			held[e.Facts.Key] = *e.Facts.Held
		}
	}
	gone, ok := held[key]
	if !ok {
		return Herd{}, false
	}
	keys := make([]StoreKey, 0, len(held))
	for _, k := range held {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].CreateRevision < keys[j].CreateRevision })
	h := Herd{Key: key, Revision: rev, Owner: owners[key]}
	waiters := map[string]bool{}
	for i, k := range keys {
		who := owners[k.Key]
		if k.Key == key || (who != "" && who == h.Owner) {
			continue
		}
		if who == "" {
			h.Line++ // a key nobody said is theirs: a waiter all the same
		} else if !waiters[who] {
			waiters[who] = true
			h.Line++
		}
		if i > 0 && keys[i-1].Key == key && k.CreateRevision > gone.CreateRevision {
			h.Next = who
		}
	}
	for _, e := range wakes {
		if e.Replica == h.Owner || slices.Contains(h.Woken, e.Replica) {
			continue
		}
		inLine, next, further := placeOf(keys, key, gone.CreateRevision, e.Replica, owners)
		if !inLine {
			continue // no place in line: not a waiter
		}
		h.Woken = append(h.Woken, e.Replica)
		h.Events = append(h.Events, e)
		if further && !next {
			if len(h.Needless) == 0 {
				h.At = e.At
			}
			h.Needless = append(h.Needless, e.Replica)
		}
	}
	return h, len(h.Needless) > 0
}

// placeOf says whether replica has a key in line (keys, oldest first;
// the deleted key, created at created, aside), whether one of its keys
// is directly behind the deleted key (next), and whether one is further
// back (further). A replica may have two: a restarted process's new key
// beside its old one, which waits out its lease.
//
// Only a waiter further back is woken needlessly: one ahead of the
// deleted key may be a correct waiter that watched its predecessor's
// key name and met the name again, used by the same lease for a new
// place behind it (a missed turn, which turns-go-on judges, not a herd).
func placeOf(keys []StoreKey, deleted string, created int64, replica string, owners map[string]string) (inLine, next, further bool) {
	for i, k := range keys {
		if k.Key == deleted || owners[k.Key] != replica {
			continue
		}
		inLine = true
		switch {
		case i > 0 && keys[i-1].Key == deleted:
			next = true
		case k.CreateRevision > created:
			further = true
		}
	}
	return inLine, next, further
}
