package labrun

import (
	"fmt"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// Lab 07 (the election loop) as the replicas: each replica process runs
// the learner's Candidate, whose Work writes to the fenced resource with
// the term's token (internal/labrun/election07).
var lab07 = Lab{
	ID: "07_election", File: "election.go", Main: "./internal/labrun/election07",
	scenario: &experiment.Scenario{
		Name:     "lab-07_election",
		Title:    "your leader loop under faults", // numbered by the course (registry)
		Summary:  "Each replica runs the lab's Candidate; a leader's Work writes to a fenced resource with its term's token.",
		Faults:   "the schedule's (pause, cut off, crash, restart the owner)",
		Resource: true, DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 7, DefaultTTL: 2,
		Shows: lab07Shows, OwnRules: true, Run: labWithoutSpec,
	},
	prefix:   lab07Election,
	owned:    lab07Owned,
	returned: lab07Returned,
}

// lab07Election is the election's name (concurrency.NewElection's
// prefix) inside the run's namespace; its candidates' keys are under
// lab07Owned.
const (
	lab07Election = "election"
	lab07Owned    = lab07Election + "/"
	lab07Returned = "Candidate.Run returned"
)

// What a run of lab 07 holds the learner's code to, judged on its
// history like every scenario's properties. A violation is named with
// its time and the replicas in it.
var lab07Shows = []history.Property{
	{Name: "no-failure", Find: labNoFailure},
	{Name: "token-is-key", Find: labTokenIsKey},
	{Name: "stops-when-lost", Find: labStopsWhenLost},
	{Name: "leader-not-refused", Find: labLeaderNotRefused},
	{Name: "leader-again", Find: labLeaderAgain},
	labReleasedOnStop(lab07Owned, lab07Returned),
	pacedRetries,
}

// labStopGrace is how long after etcd deleted its key (or after it was
// woken from a pause, if later) a leader may still be working: the
// client notices a lost lease within about half a second of etcd.
const labStopGrace = 2 * time.Second

// labTokenIsKey: every term's token is its key's CreateRevision, with the
// key still in etcd when Work began. The key watch and the replica's own
// report travel apart, so the watch may report a key's creation after
// the Work it led to: a key counts as gone only once the watch reported
// its deletion before the term's start (by more than labWatchSlack).
func labTokenIsKey(f *history.Findings) history.Finding {
	puts := map[string]history.StoreKey{} // key -> how etcd first held it
	dels := map[string]time.Duration{}    // key -> when the watch saw it deleted
	for _, e := range f.Events {
		if e.Kind != history.KeyChanged || e.Facts == nil {
			continue
		}
		if _, seen := dels[e.Facts.Key]; e.Facts.Op == "delete" && !seen {
			dels[e.Facts.Key] = e.At
		} else if _, seen := puts[e.Facts.Key]; e.Facts.Held != nil && !seen {
			puts[e.Facts.Key] = *e.Facts.Held
		}
	}
	for _, e := range f.Events {
		if e.Kind != history.Acquired || e.Facts == nil {
			continue
		}
		k, ok := puts[e.Facts.Key]
		d, gone := dels[e.Facts.Key]
		switch {
		case !ok:
			return breaks("work-without-key", e.At, []string{e.Replica}, []history.Event{e}, "%s's Work began with token %d, but etcd never held its key %s.", e.Replica, e.Token, e.Facts.Key)
		case k.CreateRevision != e.Token:
			return breaks("wrong-token", e.At, []string{e.Replica}, []history.Event{e}, "%s's term carries token %d, but its key %s was created at revision %d.", e.Replica, e.Token, e.Facts.Key, k.CreateRevision)
		case gone && d < e.At-labWatchSlack:
			return breaks("work-without-key", e.At, []string{e.Replica}, []history.Event{e}, "%s's Work began with token %d, but etcd had deleted its key %s at %s.", e.Replica, e.Token, e.Facts.Key, at(d))
		}
	}
	return holds("Every term's token was its key's CreateRevision, the key still in etcd.")
}

// labWatchSlack is how far apart the key watch's report and a replica's
// may arrive for the same instant.
const labWatchSlack = 100 * time.Millisecond

// labStopsWhenLost: a leader stops working soon after etcd deleted its
// key (soon after it was woken, if it was paused then).
func labStopsWhenLost(f *history.Findings) history.Finding {
	gone := map[string]time.Duration{} // key -> when etcd deleted it
	woke := map[string]time.Duration{} // replica -> last Resumed
	for _, e := range f.Events {
		switch {
		case e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Op == "delete":
			gone[e.Facts.Key] = e.At
		case e.Kind == history.Resumed:
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
			return breaks("kept-working", from+labStopGrace, []string{t.Replica}, nil, "%s kept working as leader with token %d after etcd deleted its key %s at %s; %s (%.1f s late).", t.Replica, t.Token, t.Key, at(d), ended, late.Seconds())
		}
	}
	return holds(fmt.Sprintf("Every leader stopped working within %s of losing its key.", labStopGrace))
}

// labLeaderNotRefused: the fenced resource never refused the leader etcd
// held (the oldest key under the lab's prefix).
func labLeaderNotRefused(f *history.Findings) history.Finding {
	held := map[string]history.StoreKey{}
	keyOf := map[string]string{} // replica -> key of its current term
	for _, e := range f.Events {
		trackHeld(held, e)
		if e.Kind == history.Acquired && e.Facts != nil {
			keyOf[e.Replica] = e.Facts.Key
		}
		if e.Kind != history.WriteRejected {
			continue
		}
		if k := keyOf[e.Replica]; k != "" && oldestKey(held) == k {
			return breaks("leader-refused", e.At, []string{e.Replica}, []history.Event{e}, "the resource refused %s's write with token %d although etcd held %s's key %s as the leader's (the resource had accepted token %d).", e.Replica, e.Token, e.Replica, k, e.Facts.Highest)
		}
	}
	return holds("The resource never refused the leader etcd held.")
}

func oldestKey(held map[string]history.StoreKey) string {
	best, rev := "", int64(0)
	for k, v := range held {
		if strings.HasPrefix(k, lab07Owned) && (rev == 0 || v.CreateRevision < rev) {
			best, rev = k, v.CreateRevision
		}
	}
	return best
}

// labLeaderAgain: a leader was elected, and after losing one the group
// had another within a bound, up to the shutdown.
func labLeaderAgain(f *history.Findings) history.Finding {
	bound := 2*time.Duration(f.Params.TTL)*time.Second + 4*time.Second
	if len(f.Terms) == 0 {
		return breaksRun("no-leader", "no replica's Work was ever called.")
	}
	stop := time.Duration(-1)
	if e, ok := f.FirstEvent(func(e history.Event) bool { return e.Kind == history.Phase && e.Text == labStopPhase }); ok {
		stop = e.At
	}
	for _, g := range f.Gaps {
		if stop >= 0 && g.From >= stop {
			continue
		}
		if g.Length() > bound {
			return breaks("no-leader", g.From, []string{g.Replica}, nil, "after %s's %s there was no working leader for %.1f s (more than %s).", g.Replica, g.After, g.Length().Seconds(), bound)
		}
	}
	if stop >= 0 {
		if last := f.Terms[len(f.Terms)-1]; last.To < stop && stop-last.To > bound {
			return breaks("no-leader", last.To, []string{last.Replica}, nil, "the last leader, %s, stopped working at %s and none followed before the shutdown.", last.Replica, at(last.To))
		}
	}
	return holds(fmt.Sprintf("A leader worked again within %s of every loss.", bound))
}
