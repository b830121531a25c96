package labrun

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

func at(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// A lab's rules judge the learner's code by its own reports and etcd's
// watch, and write their findings themselves: the violation's name, its
// instant, the replica whose act broke the rule first and the events it
// rests on, which the lab screen's timeline opens at and marks.

// breaks is a rule's finding that it did not hold: the violation's name,
// when, who (the replica whose act broke it first; names unknown ("") and
// repeated are left out) and on what events; its sentence begins with
// the name and the instant ("released-another at 5.63 s: ") and goes on
// in the rule's words.
func breaks(name string, t time.Duration, who []string, events []history.Event, format string, args ...any) history.Finding {
	var replicas []string
	for _, r := range who {
		if r != "" && !slices.Contains(replicas, r) {
			replicas = append(replicas, r)
		}
	}
	return history.Finding{Violation: name, At: t, Timed: true, Replicas: replicas, Events: events,
		Text: fmt.Sprintf("%s at %s: ", name, at(t)) + fmt.Sprintf(format, args...)}
}

// breaksRun is a rule's finding that the run as a whole broke it, at no
// instant ("no-holder: no replica's Acquire ever took the lock.").
func breaksRun(name, text string) history.Finding {
	return history.Finding{Violation: name, Text: name + ": " + text}
}

// holds is a rule's finding that it held, in its words.
func holds(text string) history.Finding { return history.Finding{Held: true, Text: text} }

// labNoFailure: no replica's code panicked, hung, or returned early. A
// hang is named apart (hung-on-stop): what the learner must fix there is
// a wait with no bound, or one the shutdown does not end, and the
// finding says where the code stood.
func labNoFailure(f *history.Findings) history.Finding {
	if e, ok := f.FirstEvent(history.KindIs(ReplicaFailed, "")); ok {
		if e.Facts != nil && e.Facts.Op == OpHung {
			return breaks("hung-on-stop", e.At, []string{e.Replica}, []history.Event{e}, "%s's code hung: %s.", e.Replica, strings.TrimSuffix(e.Text, "."))
		}
		return breaks("replica-failed", e.At, []string{e.Replica}, []history.Event{e}, "%s's code failed: %s.", e.Replica, strings.TrimSuffix(e.Text, "."))
	}
	return holds("Every replica's code ran until it was told to stop, and then stopped.")
}

func trackHeld(held map[string]history.StoreKey, e history.Event) {
	if e.Kind != history.KeyChanged || e.Facts == nil || e.Facts.Held == nil {
		return
	}
	if e.Facts.Op == "delete" {
		delete(held, e.Facts.Key)
	} else {
		held[e.Facts.Key] = *e.Facts.Held
	}
}

// labReleasedOnStop: once told to stop, a replica's code deletes its
// keys under owned (a resign, a release or a revoked lease) before it
// returns, which its process reports with a note beginning with
// returned: a key left behind waits out its lease, and the next owner
// with it. Nor may a lease it was granted outlive its process.
func labReleasedOnStop(owned, returned string) history.Property {
	return history.Property{Name: "released-on-stop", Find: func(f *history.Findings) history.Finding {
		if k, ok := lateRelease(f.Events, owned, returned); ok {
			return k
		}
		if k, ok := leaseOutlived(f.Events); ok {
			return k
		}
		return holds("Told to stop, every replica deleted its keys and ended its leases before its process exited.")
	}}
}

// lateRelease finds a key of a replica stopped (not crashed) that etcd
// still held more than labReleaseWait after the replica's Run returned.
func lateRelease(events []history.Event, owned, returned string) (history.Finding, bool) {
	h := &history.History{Events: events}
	stop, ok := stopAt(events)
	if !ok {
		return history.Finding{}, false
	}
	back := map[string]history.Event{} // replica -> its note that its code returned
	gone := map[string]time.Duration{}
	for _, e := range events {
		if e.At < stop {
			continue
		}
		if e.Kind == history.Note && e.Replica != "" && strings.HasPrefix(e.Text, returned) {
			back[e.Replica] = e
		}
		if e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Op == "delete" {
			gone[e.Facts.Key] = e.At
		}
	}
	log := newKeyLog(events)
	for _, k := range heldAt(h, stop, owned) {
		r, ok := back[k.Value]
		if !ok || orphaned(events, log, k) {
			continue
		}
		ret, who := r.At, []string{k.Value}
		d, deleted := gone[k.Key]
		if !deleted {
			return breaks("left-behind", ret+labReleaseWait, who, []history.Event{r}, "%s's code returned at %s, but etcd still held its key %s (lease %x) when the run ended.", k.Value, at(ret), k.Key, k.Lease), true
		}
		if d-ret > labReleaseWait {
			return breaks("left-behind", ret+labReleaseWait, who, []history.Event{r}, "%s's code returned at %s without deleting its key %s; etcd deleted it only at %s, when its lease ran out.", k.Value, at(ret), k.Key, at(d)), true
		}
	}
	return history.Finding{}, false
}

// orphaned reports whether key k was created before its replica (named
// by its value) last restarted: the crashed process's key, which the one
// that returned never held.
func orphaned(events []history.Event, log keyLog, k history.StoreKey) bool {
	put, ok := log.at(k.Key, k.CreateRevision)
	if !ok {
		return false
	}
	for _, e := range events {
		if e.Kind == history.Restarted && e.Replica == k.Value && e.At > put.At {
			return true
		}
	}
	return false
}

// leaseOutlived finds a lease that etcd still held after the process it
// was granted to had exited when told to stop: TimeToLive, asked by the
// playground once the process was gone, still counted it down.
func leaseOutlived(events []history.Event) (history.Finding, bool) {
	stop, ok := stopAt(events)
	if !ok {
		return history.Finding{}, false
	}
	for _, e := range events {
		if e.At < stop || e.Kind != history.Note || e.Facts == nil || e.Facts.Op != "timetolive" || e.Facts.TTLLeft < 0 {
			continue
		}
		return breaks("left-behind", e.At, []string{e.Replica}, []history.Event{e}, "%s's process had exited when told to stop, but etcd still held the lease %x it was granted (TimeToLive: %d s left of %d s): the session was not closed, so nothing revoked its lease.", e.Replica, e.Facts.Lease, e.Facts.TTLLeft, e.Facts.GrantedTTL), true
	}
	return history.Finding{}, false
}

func stopAt(events []history.Event) (time.Duration, bool) {
	for _, e := range events {
		if e.Kind == history.Phase && e.Text == labStopPhase {
			return e.At, true
		}
	}
	return 0, false
}

// heldAt is the keys under owned etcd held at time t, by the key watch.
func heldAt(h *history.History, t time.Duration, owned string) []history.StoreKey {
	held := map[string]history.StoreKey{}
	for _, e := range h.Events {
		if e.At > t {
			break
		}
		trackHeld(held, e)
	}
	var out []history.StoreKey
	for k, v := range held {
		if strings.HasPrefix(k, owned) {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// stillHeld is the keys under owned held at the end of h, once the run
// reached its stop phase (nil before).
func stillHeld(h *history.History, owned string) []history.StoreKey {
	if _, ok := stopAt(h.Events); !ok || len(h.Events) == 0 {
		return nil
	}
	return heldAt(h, h.Events[len(h.Events)-1].At, owned)
}

// keyLog is the key watch's events by key and revision: what etcd held
// at each revision, to judge what a replica reported it did at a
// revision whichever of the two reached the playground first.
type keyLog struct {
	byKey map[string][]history.Event // each key's KeyChanged events, by revision
	last  int64                      // the highest revision the watch reported
}

func newKeyLog(events []history.Event) keyLog {
	l := keyLog{byKey: map[string][]history.Event{}}
	for _, e := range events {
		if e.Kind != history.KeyChanged || e.Facts == nil {
			continue
		}
		l.byKey[e.Facts.Key] = append(l.byKey[e.Facts.Key], e)
		l.last = max(l.last, e.Facts.Revision)
	}
	for _, es := range l.byKey {
		sort.SliceStable(es, func(i, j int) bool { return es[i].Facts.Revision < es[j].Facts.Revision })
	}
	return l
}

// at is key's change at revision rev, if the watch saw one.
func (l keyLog) at(key string, rev int64) (history.Event, bool) {
	for _, e := range l.byKey[key] {
		if e.Facts.Revision == rev {
			return e, true
		}
	}
	return history.Event{}, false
}

// asOf is key as etcd held it once revision rev was applied, and false
// when it did not exist then.
func (l keyLog) asOf(key string, rev int64) (history.StoreKey, bool) {
	var k history.StoreKey
	ok := false
	for _, e := range l.byKey[key] {
		if e.Facts.Revision > rev {
			break
		}
		ok = e.Facts.Op != "delete" && e.Facts.Held != nil
		if ok {
			k = *e.Facts.Held
		}
	}
	return k, ok
}

// reached reports whether the watch saw revision rev or a later one.
func (l keyLog) reached(rev int64) bool { return l.last >= rev }

// deletedPrev is what a delete of key at rev took away: its previous
// value (false if the watch saw no such delete).
func (l keyLog) deletedPrev(key string, rev int64) (history.StoreKey, bool) {
	e, ok := l.at(key, rev)
	if !ok || e.Facts.Op != "delete" {
		return history.StoreKey{}, false
	}
	if len(e.Facts.Prev) > 0 {
		return e.Facts.Prev[0], true
	}
	return l.asOf(key, rev-1)
}
