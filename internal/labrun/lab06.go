package labrun

import (
	"fmt"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// Lab 06 (a fenced write to etcd) as the replicas: each replica process
// takes turns at a lock (the playground's) and, while it holds it,
// writes a value with the learner's Write, which must let etcd refuse
// it once the lock is not the writer's (internal/labrun/fenced06). The
// resource is etcd itself: the checker reads from the key watch what
// etcd took, and what the lock was at that revision.
var lab06 = Lab{
	ID: "06_fenced_write", File: "fenced.go", Main: "./internal/labrun/fenced06",
	scenario: &experiment.Scenario{
		Name:            "lab-06_fenced_write",
		Title:           "your fenced write under faults", // numbered by the course (registry)
		Summary:         "The replicas take turns at a lock; a holder writes a value to etcd with the lab's Write, which etcd must refuse once the lock is not the writer's.",
		Faults:          "the schedule's (pause, cut off, crash, restart the holder)",
		DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 7, DefaultTTL: 2,
		Shows: lab06Shows, OwnRules: true, Run: labWithoutSpec,
	},
	prefix:   lab06Prefix,
	owned:    lab06Lock,
	returned: lab06Returned,
}

const (
	lab06Prefix   = "fenced/"
	lab06Lock     = lab06Prefix + "lock" // the lock the replicas take turns at
	lab06Data     = lab06Prefix + "data" // what the lab's Write writes
	lab06Returned = "The writer loop returned"
)

// What a run of lab 06 holds the learner's Write to.
var lab06Shows = []history.Property{
	{Name: "no-failure", Find: labNoFailure},
	{Name: "no-stale-write", Find: lab06NoStaleWrite},
	{Name: "owner-not-refused", Find: lab06OwnerNotRefused},
	{Name: "writes-landed", Find: lab06WritesLanded},
	{Name: "no-clobber", Find: lab06NoClobber},
}

// lab06Value reads who wrote a value and with which token (the replica
// writes "r1 token 9 write 3").
func lab06Value(v string) (who string, token int64, ok bool) {
	var n int
	_, err := fmt.Sscanf(v, "%s token %d write %d", &who, &token, &n)
	return who, token, err == nil
}

// lab06NoStaleWrite: every value etcd took was written while the lock
// was the writer's: created at the writer's token.
func lab06NoStaleWrite(f *history.Findings) history.Finding {
	log := newKeyLog(f.Events)
	landed := 0
	for _, e := range log.byKey[lab06Data] {
		if e.Facts.Op == "delete" || e.Facts.Held == nil {
			continue
		}
		who, token, ok := lab06Value(e.Facts.Held.Value)
		if !ok {
			continue
		}
		landed++
		rev := e.Facts.Revision
		lock, held := log.asOf(lab06Lock, rev-1)
		switch {
		case !held:
			return breaks("stale-write", e.At, []string{who}, []history.Event{e}, "etcd took %s's write with token %d at revision %d while no one held the lock.", who, token, rev)
		case lock.CreateRevision != token:
			return breaks("stale-write", e.At, []string{who, lock.Value}, []history.Event{e}, "etcd took %s's write with token %d at revision %d while the lock was %s's, created at revision %d.", who, token, rev, lock.Value, lock.CreateRevision)
		}
	}
	if landed == 0 {
		return breaksRun("no-write", "no value written with the lab's Write ever reached etcd.")
	}
	return holds(fmt.Sprintf("All %d values etcd took were written while the lock was their writer's.", landed))
}

// lab06OwnerNotRefused: Write refused no holder whose lock etcd still
// held, by etcd's answer's revision.
func lab06OwnerNotRefused(f *history.Findings) history.Finding {
	log := newKeyLog(f.Events)
	for _, e := range f.Events {
		if e.Kind != history.WriteRejected || e.Facts == nil || e.Facts.Op != "write" {
			continue
		}
		rev := e.Facts.Revision
		if rev == 0 {
			return breaks("refused-unasked", e.At, []string{e.Replica}, []history.Event{e}, "%s's Write refused token %d without asking etcd.", e.Replica, e.Token)
		}
		if lock, held := log.asOf(lab06Lock, rev); held && lock.CreateRevision == e.Token && log.reached(rev) {
			return breaks("owner-refused", e.At, []string{e.Replica}, []history.Event{e}, "%s's Write refused token %d, but at revision %d, etcd's answer, the lock was still its own (created at revision %d, last written at %d).", e.Replica, e.Token, rev, lock.CreateRevision, lock.ModRevision)
		}
	}
	return holds("Write refused only writers whose lock was gone or someone else's.")
}

// lab06WritesLanded: every Write that reported success returned the
// revision at which etcd took its value.
func lab06WritesLanded(f *history.Findings) history.Finding {
	log := newKeyLog(f.Events)
	for _, e := range f.Events {
		if e.Kind != history.WriteAccepted || e.Facts == nil || e.Facts.Op != "write" {
			continue
		}
		rev := e.Facts.Revision
		if !log.reached(rev) {
			continue
		}
		ch, ok := log.at(lab06Data, rev)
		who, token := "", int64(0)
		if ok && ch.Facts.Held != nil {
			who, token, _ = lab06Value(ch.Facts.Held.Value)
		}
		if who != e.Replica || token != e.Token {
			return breaks("phantom-write", e.At, []string{e.Replica}, []history.Event{e}, "%s's Write with token %d returned revision %d, but etcd took no value of %s's at that revision.", e.Replica, e.Token, rev, e.Replica)
		}
	}
	return holds("Every Write that reported success returned the revision at which etcd took its value.")
}

// lab06Writer names the replica a value names as its writer.
func lab06Writer(k history.StoreKey) string {
	who, _, ok := lab06Value(k.Value)
	if !ok {
		return ""
	}
	return who
}

// lab06NoClobber: no replica deleted or overwrote the value the lock's
// holder had written under its token while the lock was still its own,
// by etcd's watch and by the revisions each replica's requests changed
// etcd at (a refused Write whose Else branch deletes the data, say).
func lab06NoClobber(f *history.Findings) history.Finding {
	cs := history.Clobbers(f.Events, lab06Lock, lab06Data, lab06Writer)
	if len(cs) == 0 {
		return holds("No replica deleted or overwrote a value the lock's holder had written under its token while it held the lock.")
	}
	c := cs[0]
	did := "overwrote"
	if c.Deleted {
		did = "deleted"
	}
	return breaks("clobbered", c.At, []string{c.Actor, c.Owner}, []history.Event{c.By, c.Change},
		"%s %s %s at revision %d, which held what %s wrote with token %d at revision %d, while the lock was still %s's (created at revision %d): the holder's work was lost to a replica that did not hold the lock.",
		c.Actor, did, c.Key, c.Revision, c.Owner, c.Token, c.Written.Facts.Revision, c.Owner, c.Token)
}
