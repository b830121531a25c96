package history

import (
	"sort"
	"strings"
	"time"
)

// Takeover is an owner key (a shard's, say: one key a worker holds, its
// value the holder's name) that a replica other than its holder deleted
// or wrote over: a release that was not guarded by the holder's token,
// or a claim that did not check the key was free. Either way the holder
// still believes it owns what etcd now says is nobody's or someone
// else's.
type Takeover struct {
	At       time.Duration // when the key watch saw the change
	Key      string        // the owner key
	Revision int64         // the change's revision
	Deleted  bool          // deleted; false: written over
	Holder   string        // whose key it was, by its value
	Token    int64         // the holder's token: the key's CreateRevision
	Actor    string        // the replica whose request made the change
	Held     Event         // the key watch's put that made it the holder's
	Change   Event         // the key watch's change that took it away
	// By is the actor's event that reported the change among its own
	// (Facts.Changed), or the change itself when the value put names
	// the actor.
	By Event
}

// Takeovers finds every change of a key under prefix, by the key watch,
// made while the key existed and was held by one replica (holderOf names
// it from the key as etcd held it, "" when it cannot) by the request of
// another. The actor is the replica that reported the change's revision
// in Facts.Changed or, for a put nobody reported (its answer lost), the
// one holderOf names from the value put. A delete nobody reported (a
// lease that ended or was revoked, a request whose answer was lost) is
// not judged: the checker says nothing it cannot show.
func Takeovers(events []Event, prefix string, holderOf func(StoreKey) string) []Takeover {
	by := map[int64]Event{}
	for _, e := range events {
		if e.Facts != nil && e.Replica != "" && e.Kind != KeyChanged {
			for _, rev := range e.Facts.Changed {
				if _, ok := by[rev]; !ok {
					by[rev] = e
				}
			}
		}
	}
	var changes []Event
	for _, e := range events {
		if e.Kind == KeyChanged && e.Facts != nil && e.Facts.Held != nil && strings.HasPrefix(e.Facts.Key, prefix) {
			changes = append(changes, e)
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Facts.Revision < changes[j].Facts.Revision })
	held := map[string]Event{} // key -> the put that made it what etcd holds
	var out []Takeover
	for _, c := range changes {
		key, rev := c.Facts.Key, c.Facts.Revision
		deleted := c.Facts.Op == "delete"
		if last, ok := held[key]; ok {
			holder := holderOf(*last.Facts.Held)
			actor, report := "", c
			if e, ok := by[rev]; ok {
				actor, report = e.Replica, e
			} else if !deleted {
				actor = holderOf(*c.Facts.Held)
			}
			if holder != "" && actor != "" && actor != holder {
				out = append(out, Takeover{At: c.At, Key: key, Revision: rev, Deleted: deleted,
					Holder: holder, Token: last.Facts.Held.CreateRevision, Actor: actor,
					Held: last, Change: c, By: report})
			}
		}
		if deleted {
			delete(held, key)
		} else {
			held[key] = c
		}
	}
	return out
}
