package experiment

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// What a lab run holds the learner's code to, judged on its history like
// every scenario's properties. A violation is named with its time and
// the replicas in it.
var labShows = []Property{
	{Check: labNoFailure},
	{Check: labTokenIsKey},
	{Check: labStopsWhenLost},
	{Check: labLeaderNotRefused},
	{Check: labLeaderAgain},
	{Check: labReleasedOnStop},
}

// labStopGrace is how long after etcd deleted its key (or after it was
// woken from a pause, if later) a leader may still be working: the
// client notices a lost lease within about half a second of etcd.
const labStopGrace = 2 * time.Second

func at(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// labNoFailure: no replica's code panicked, hung, or returned early.
func labNoFailure(f *Findings) (bool, string) {
	if e, ok := f.firstEvent(kindIs(ReplicaFailed, "")); ok {
		return false, fmt.Sprintf("replica-failed at %s: %s's code failed: %s.", at(e.At), e.Replica, strings.TrimSuffix(e.Text, "."))
	}
	return true, "Every replica's code ran until it was told to stop, and then stopped."
}

// labTokenIsKey: every term's token is its key's CreateRevision, with the
// key still in etcd when Work began.
func labTokenIsKey(f *Findings) (bool, string) {
	held := map[string]StoreKey{}
	for _, e := range f.Events {
		trackHeld(held, e)
		if e.Kind != Acquired || e.Facts == nil {
			continue
		}
		k, ok := held[e.Facts.Key]
		switch {
		case !ok:
			return false, fmt.Sprintf("work-without-key at %s: %s's Work began with token %d, but etcd no longer held its key %s.", at(e.At), e.Replica, e.Token, e.Facts.Key)
		case k.CreateRevision != e.Token:
			return false, fmt.Sprintf("wrong-token at %s: %s's term carries token %d, but its key %s was created at revision %d.", at(e.At), e.Replica, e.Token, e.Facts.Key, k.CreateRevision)
		}
	}
	return true, "Every term's token was its key's CreateRevision, the key still in etcd."
}

func trackHeld(held map[string]StoreKey, e Event) {
	if e.Kind != KeyChanged || e.Facts == nil || e.Facts.Held == nil {
		return
	}
	if e.Facts.Op == "delete" {
		delete(held, e.Facts.Key)
	} else {
		held[e.Facts.Key] = *e.Facts.Held
	}
}

// labStopsWhenLost: a leader stops working soon after etcd deleted its
// key (soon after it was woken, if it was paused then).
func labStopsWhenLost(f *Findings) (bool, string) {
	gone := map[string]time.Duration{} // key -> when etcd deleted it
	woke := map[string]time.Duration{} // replica -> last Resumed
	for _, e := range f.Events {
		switch {
		case e.Kind == KeyChanged && e.Facts != nil && e.Facts.Op == "delete":
			gone[e.Facts.Key] = e.At
		case e.Kind == Resumed:
			woke[e.Replica] = e.At
		}
	}
	for _, t := range f.Terms {
		d, ok := gone[t.Key]
		if !ok || t.Key == "" || d < t.From {
			continue
		}
		from := max(d, woke[t.Replica])
		if late := t.To - from; late > labStopGrace {
			ended := "it was still working when the run ended"
			if t.Ended != "" {
				ended = fmt.Sprintf("it stopped only at %s", at(t.To))
			}
			return false, fmt.Sprintf("kept-working at %s: %s kept working as leader with token %d after etcd deleted its key %s at %s; %s (%.1f s late).", at(from+labStopGrace), t.Replica, t.Token, t.Key, at(d), ended, late.Seconds())
		}
	}
	return true, fmt.Sprintf("Every leader stopped working within %s of losing its key.", labStopGrace)
}

// labLeaderNotRefused: the fenced resource never refused the leader etcd
// held (the oldest key under the lab's prefix).
func labLeaderNotRefused(f *Findings) (bool, string) {
	held := map[string]StoreKey{}
	keyOf := map[string]string{} // replica -> key of its current term
	for _, e := range f.Events {
		trackHeld(held, e)
		if e.Kind == Acquired && e.Facts != nil {
			keyOf[e.Replica] = e.Facts.Key
		}
		if e.Kind != WriteRejected {
			continue
		}
		if k := keyOf[e.Replica]; k != "" && oldestKey(held) == k {
			return false, fmt.Sprintf("leader-refused at %s: the resource refused %s's write with token %d although etcd held %s's key %s as the leader's (the resource had accepted token %d).", at(e.At), e.Replica, e.Token, e.Replica, k, e.Facts.Highest)
		}
	}
	return true, "The resource never refused the leader etcd held."
}

func oldestKey(held map[string]StoreKey) string {
	best, rev := "", int64(0)
	for k, v := range held {
		if strings.HasPrefix(k, labPrefix) && (rev == 0 || v.CreateRevision < rev) {
			best, rev = k, v.CreateRevision
		}
	}
	return best
}

// labLeaderAgain: a leader was elected, and after losing one the group
// had another within a bound, up to the shutdown.
func labLeaderAgain(f *Findings) (bool, string) {
	bound := 2*time.Duration(f.Params.TTL)*time.Second + 4*time.Second
	if len(f.Terms) == 0 {
		return false, "no-leader: no replica's Work was ever called."
	}
	stop := time.Duration(-1)
	if e, ok := f.firstEvent(func(e Event) bool { return e.Kind == Phase && e.Text == labStopPhase }); ok {
		stop = e.At
	}
	for _, g := range f.Gaps {
		if stop >= 0 && g.From >= stop {
			continue
		}
		if g.Length() > bound {
			return false, fmt.Sprintf("no-leader at %s: after %s's %s there was no working leader for %.1f s (more than %s).", at(g.From), g.Replica, g.After, g.Length().Seconds(), bound)
		}
	}
	if stop >= 0 {
		if last := f.Terms[len(f.Terms)-1]; last.To < stop && stop-last.To > bound {
			return false, fmt.Sprintf("no-leader at %s: the last leader, %s, stopped working at %s and none followed before the shutdown.", at(last.To), last.Replica, at(last.To))
		}
	}
	return true, fmt.Sprintf("A leader worked again within %s of every loss.", bound)
}

// labReleasedOnStop: once told to stop, a replica's code deletes its
// keys (a resign or a revoked lease) before its Run returns: a key left
// behind waits out its lease, and the next leader with it.
func labReleasedOnStop(f *Findings) (bool, string) {
	if k, ok := lateRelease(f.Events); ok {
		return false, k
	}
	return true, "Told to stop, every replica deleted its keys before its Run returned."
}

// lateRelease finds a key of a replica stopped (not crashed) that etcd
// still held more than labReleaseWait after the replica's Run returned.
func lateRelease(events []Event) (string, bool) {
	h := &History{Events: events}
	stop, ok := stopAt(events)
	if !ok {
		return "", false
	}
	returned := map[string]time.Duration{}
	gone := map[string]time.Duration{}
	for _, e := range events {
		if e.At < stop {
			continue
		}
		if e.Kind == Note && e.Replica != "" && strings.HasPrefix(e.Text, "Candidate.Run returned") {
			returned[e.Replica] = e.At
		}
		if e.Kind == KeyChanged && e.Facts != nil && e.Facts.Op == "delete" {
			gone[e.Facts.Key] = e.At
		}
	}
	for _, k := range heldAt(h, stop) {
		ret, ok := returned[k.Value]
		if !ok {
			continue
		}
		d, deleted := gone[k.Key]
		if !deleted {
			return fmt.Sprintf("left-behind at %s: %s's Run returned at %s, but etcd still held its key %s (lease %x) when the run ended.", at(ret+labReleaseWait), k.Value, at(ret), k.Key, k.Lease), true
		}
		if d-ret > labReleaseWait {
			return fmt.Sprintf("left-behind at %s: %s's Run returned at %s without deleting its key %s; etcd deleted it only at %s, when its lease ran out.", at(ret+labReleaseWait), k.Value, at(ret), k.Key, at(d)), true
		}
	}
	return "", false
}

func stopAt(events []Event) (time.Duration, bool) {
	for _, e := range events {
		if e.Kind == Phase && e.Text == labStopPhase {
			return e.At, true
		}
	}
	return 0, false
}

// heldAt is the lab's keys etcd held at time t, by the key watch.
func heldAt(h *History, t time.Duration) []StoreKey {
	held := map[string]StoreKey{}
	for _, e := range h.Events {
		if e.At > t {
			break
		}
		trackHeld(held, e)
	}
	var out []StoreKey
	for k, v := range held {
		if strings.HasPrefix(k, labPrefix) {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// stillHeld is the lab's keys held at the end of h, once the run reached
// its stop phase (nil before).
func stillHeld(h *History) []StoreKey {
	if _, ok := stopAt(h.Events); !ok || len(h.Events) == 0 {
		return nil
	}
	return heldAt(h, h.Events[len(h.Events)-1].At)
}
