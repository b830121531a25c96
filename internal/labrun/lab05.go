package labrun

import (
	"context"
	"fmt"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// Lab 05 (a lock on etcd) as the replicas: each replica process takes
// turns at one lock with the learner's Acquire and Release; a holder
// writes to the fenced resource with its token, then releases
// (internal/labrun/lock05). Each replica reports the revision at which
// the lab's code wrote or deleted the lock, and the checker reads what
// etcd did at that revision from the key watch.
var lab05 = Lab{
	ID: "05_etcd_lock", File: "lock.go", Main: "./internal/labrun/lock05",
	scenario: &experiment.Scenario{
		Name:     "lab-05_etcd_lock",
		Title:    "your lock under faults", // numbered by the course (registry)
		Summary:  "The replicas take turns at one lock with the lab's Acquire and Release; a holder writes to a fenced resource with its token, then releases.",
		Faults:   "the schedule's (pause, cut off, crash, restart the holder)",
		Resource: true, DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 7, DefaultTTL: 2,
		Shows: lab05Shows, OwnRules: true, Run: labWithoutSpec,
	},
	prefix:    lab05Key,
	owned:     lab05Key,
	returned:  lab05Returned,
	prepare:   lockNeighbour,
	neighbour: lab05Neighbour,
}

const (
	// lab05Key is the lock's key inside the run's namespace.
	lab05Key      = "locks/resource"
	lab05Returned = "The lock loop returned"
)

// lab05Neighbour is another application's lock, whose key begins with
// this lock's (in a folder of its own, so it is no part of this lock's
// line): a Release that deletes by prefix takes it too.
const lab05Neighbour = lab05Key + "s/nightly-report"

// lockNeighbour puts the neighbour's lock, as another application
// sharing the namespace would, for the whole run.
func lockNeighbour(ctx context.Context, run *experiment.Run) error {
	r, err := run.Admin().Put(ctx, lab05Neighbour, "another application")
	if err != nil {
		return fmt.Errorf("put the neighbour's lock %s: %w", lab05Neighbour, err)
	}
	run.Note("etcd took another application's lock at %s (revision %d), to stay there the whole run: its name begins with this lock's, but it is not this lock", lab05Neighbour, r.Header.Revision)
	return nil
}

// What a run of lab 05 holds the learner's lock to.
var lab05Shows = []history.Property{
	{Name: "no-failure", Find: labNoFailure},
	{Name: "one-holder", Find: lab05OneHolder},
	{Name: "releases-own", Find: lab05ReleasesOwn},
	{Name: "freed-after-crash", Find: lab05FreedAfterCrash},
	{Name: "turns-go-on", Find: lab05Turns},
	{Name: "locked-means-held", Find: lab05LockedMeansHeld},
	labReleasedOnStop(lab05Key, lab05Returned),
}

// lab05OneHolder: every Acquire that succeeded created the lock key
// (none wrote over a lock someone held: two holders by etcd's truth),
// and returned that key's CreateRevision as its token.
func lab05OneHolder(f *history.Findings) history.Finding {
	log := newKeyLog(f.Events)
	for _, e := range f.Events {
		if e.Kind != history.Acquired || e.Facts == nil || e.Facts.Op != "acquire" {
			continue
		}
		rev := e.Facts.Revision
		if rev == 0 {
			return breaks("took-without-write", e.At, []string{e.Replica}, []history.Event{e}, "%s's Acquire returned token %d, but its requests wrote nothing to etcd.", e.Replica, e.Token)
		}
		ch, ok := log.at(lab05Key, rev)
		if !ok {
			if log.reached(rev) {
				return breaks("wrong-key", e.At, []string{e.Replica}, []history.Event{e}, "%s's Acquire wrote at revision %d, but not the lock key %s.", e.Replica, rev, lab05Key)
			}
			continue
		}
		k := ch.Facts.Held
		if before, held := log.asOf(lab05Key, rev-1); held {
			return breaks("two-holders", e.At, []string{e.Replica, before.Value}, []history.Event{e, ch}, "%s's Acquire wrote the lock key at revision %d while etcd held it for %s (created at revision %d): two replicas took the lock.", e.Replica, rev, before.Value, before.CreateRevision)
		}
		if e.Token != k.CreateRevision {
			return breaks("wrong-token", e.At, []string{e.Replica}, []history.Event{e, ch}, "%s took the lock with token %d, but etcd created its lock key at revision %d; the token must be that CreateRevision.", e.Replica, e.Token, k.CreateRevision)
		}
	}
	return holds("Every Acquire that succeeded created the lock key, and its token was that key's CreateRevision.")
}

// lab05ReleasesOwn: a Release deletes only the lock of the replica that
// calls it, and leaves the neighbour's lock alone.
func lab05ReleasesOwn(f *history.Findings) history.Finding {
	if k, ok := lab05NeighbourGone(f.Events); ok {
		return k
	}
	log := newKeyLog(f.Events)
	mine := map[string]int64{} // replica -> CreateRevision of the lock it took last
	for _, e := range f.Events {
		if e.Facts == nil {
			continue
		}
		switch {
		case e.Kind == history.Acquired && e.Facts.Op == "acquire":
			mine[e.Replica] = e.Facts.Revision
			if ch, ok := log.at(lab05Key, e.Facts.Revision); ok && ch.Facts.Held != nil {
				mine[e.Replica] = ch.Facts.Held.CreateRevision
			}
		case e.Facts.Op == "release" && e.Facts.Revision > 0:
			prev, ok := log.deletedPrev(lab05Key, e.Facts.Revision)
			if ok && prev.CreateRevision != mine[e.Replica] {
				return breaks("released-another", e.At, []string{e.Replica, prev.Value}, []history.Event{e}, "%s's Release (its lock was created at revision %d) deleted %s's lock, created at revision %d, at revision %d.", e.Replica, mine[e.Replica], prev.Value, prev.CreateRevision, e.Facts.Revision)
			}
		}
	}
	return holds("Every Release deleted only its caller's own lock.")
}

// lab05NeighbourGone finds the neighbour's lock deleted or written over,
// by etcd's watch, and whose requests did it: the replica that reported
// a change at that revision (only the replicas' code runs in the run).
func lab05NeighbourGone(events []history.Event) (history.Finding, bool) {
	for _, w := range events {
		if w.Kind != history.KeyChanged || w.Facts == nil || w.Facts.Key != lab05Neighbour {
			continue
		}
		if put := w.Facts.Op != "delete"; put && w.Facts.Held != nil && w.Facts.Held.Version == 1 {
			continue // the run's own put, before the replicas started
		}
		did, who, call := "deleted", "a replica", "requests"
		if w.Facts.Op != "delete" {
			did = "wrote over"
		}
		shown := []history.Event{w}
		for _, e := range events {
			if e.Replica != "" && e.Kind != history.KeyChanged && e.Facts != nil && e.Facts.Revision == w.Facts.Revision {
				who, call, shown = e.Replica, e.Facts.Op, []history.Event{e, w}
				break
			}
		}
		var whose []string
		if who != "a replica" {
			whose = []string{who}
		}
		return breaks("released-neighbour", w.At, whose, shown, "%s's %s %s %s at revision %d: another application's lock, which only shares the first letters of this lock's key %s.", who, call, did, lab05Neighbour, w.Facts.Revision, lab05Key), true
	}
	return history.Finding{}, false
}

// lab05FreeBound is how soon after its holder crashed etcd must have
// freed the lock: the lease's TTL runs out within a TTL of the last
// keep-alive, and etcd checks for expired leases every half second; the
// rest is room for a loaded machine.
func lab05FreeBound(p history.Params) time.Duration {
	return 2*time.Duration(p.TTL)*time.Second + time.Second
}

// lab05FreedAfterCrash: the lock of a holder whose process died goes
// when its lease runs out: the key was attached to the lease.
func lab05FreedAfterCrash(f *history.Findings) history.Finding {
	log := newKeyLog(f.Events)
	bound := lab05FreeBound(f.Params)
	end := time.Duration(0) // the last event's, the verdict's left out
	for _, e := range f.Events {
		if e.Kind != history.Finished {
			end = e.At
		}
	}
	holding := map[string]int64{} // replica -> CreateRevision of the lock it holds
	for _, e := range f.Events {
		switch {
		case e.Kind == history.Acquired && e.Facts != nil:
			holding[e.Replica] = e.Token
			if ch, ok := log.at(lab05Key, e.Facts.Revision); ok && ch.Facts.Held != nil {
				holding[e.Replica] = ch.Facts.Held.CreateRevision
			}
		case e.Kind == history.Lost || e.Kind == history.Released || e.Kind == history.SteppedDown:
			delete(holding, e.Replica)
		case e.Kind == history.Crashed && holding[e.Replica] != 0:
			created := holding[e.Replica]
			delete(holding, e.Replica)
			if fd, late := lab05FreedLate(f.Events, e, created, bound, end); late {
				return fd
			}
		}
	}
	return holds(fmt.Sprintf("Every lock whose holder crashed was freed within %s.", bound))
}

// lab05FreedLate says whether the lock created at created, whose holder
// crashed at c, outlived the bound.
func lab05FreedLate(events []history.Event, c history.Event, created int64, bound, end time.Duration) (history.Finding, bool) {
	for _, e := range events {
		if e.At < c.At || e.Kind != history.KeyChanged || e.Facts == nil || e.Facts.Op != "delete" || e.Facts.Key != lab05Key {
			continue
		}
		if len(e.Facts.Prev) > 0 && e.Facts.Prev[0].CreateRevision != created {
			continue
		}
		if e.At-c.At > bound {
			return breaks("not-freed", c.At+bound, []string{c.Replica}, []history.Event{c, e}, "%s crashed at %s holding the lock (created at revision %d); etcd freed it only at %s, %.1f s later (the bound is %s).", c.Replica, at(c.At), created, at(e.At), (e.At - c.At).Seconds(), bound), true
		}
		return history.Finding{}, false
	}
	if end-c.At > bound {
		why := ""
		if k, ok := newKeyLog(events).at(lab05Key, created); ok && k.Facts.Held != nil && k.Facts.Held.Lease == 0 {
			why = ": its key was put without a lease"
		}
		return breaks("not-freed", c.At+bound, []string{c.Replica}, []history.Event{c}, "%s crashed at %s holding the lock (created at revision %d), and etcd still held it when the run ended, %.1f s later%s.", c.Replica, at(c.At), created, (end - c.At).Seconds(), why), true
	}
	return history.Finding{}, false
}

// lab05Turns: someone took the lock, and after every turn someone took
// it again within a bound, up to the shutdown.
func lab05Turns(f *history.Findings) history.Finding {
	bound := lab05FreeBound(f.Params) + 2*time.Second
	if len(f.Terms) == 0 {
		return breaksRun("no-holder", "no replica's Acquire ever took the lock.")
	}
	stop, stopped := stopAt(f.Events)
	for _, g := range f.Gaps {
		if stopped && g.From >= stop {
			continue
		}
		if g.Length() > bound {
			return breaks("no-holder", g.From+bound, []string{g.Replica}, nil, "after %s's %s no replica held the lock for %.1f s (more than %s).", g.Replica, g.After, g.Length().Seconds(), bound)
		}
	}
	if last, open := lastTermEnd(f.Terms); stopped && !open && stop-last.To > bound {
		return breaks("no-holder", last.To+bound, []string{last.Replica}, nil, "after %s's turn ended at %s (%s) no replica took the lock before the shutdown.", last.Replica, at(last.To), last.Ended)
	}
	return holds(fmt.Sprintf("The lock changed hands, and was taken again within %s every time.", bound))
}

// lastTermEnd is the term that ended last, and whether some term was
// still open at the end.
func lastTermEnd(terms []history.Term) (history.Term, bool) {
	var last history.Term
	for _, t := range terms {
		if t.Ended == "" {
			return t, true
		}
		if t.To > last.To {
			last = t
		}
	}
	return last, false
}
