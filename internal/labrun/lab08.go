package labrun

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// Lab 08 (the herd queue) as the replicas: each replica process takes
// turns at a lock through the learner's Enqueue and WaitTurn; a holder
// writes to the fenced resource with its ticket's revision, a waiter that
// waited too long leaves the line and joins it again at the back
// (internal/labrun/herd08).
var lab08 = Lab{
	ID: "08_herd", File: "queue.go", Main: "./internal/labrun/herd08",
	scenario: &experiment.Scenario{
		Name:     "lab-08_herd",
		Title:    "your lock queue under faults", // numbered by the course (registry)
		Summary:  "Each replica joins the line with the lab's Enqueue and waits with WaitTurn; a holder writes to a fenced resource with its ticket's revision, then lets go and joins again.",
		Faults:   "the schedule's (pause, cut off, crash, restart the holder)",
		Resource: true, DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 7, DefaultTTL: 2,
		Shows: lab08Shows, OwnRules: true, Run: labWithoutSpec,
	},
	prefix:   lab08Queue,
	owned:    lab08Owned,
	returned: lab08Returned,
	prepare:  herdNeighbour,
	inLine:   herdInLine,
}

// The queue's name inside the run's namespace, its keys' prefix, and the
// note a replica sends when its loop returned (internal/labrun/herd08).
const (
	lab08Queue    = "queue"
	lab08Owned    = lab08Queue + "/"
	lab08Returned = "the queue loop returned"
)

// lab08Neighbour is a key of another queue, whose name begins with this
// queue's: it waits in its own line all run long, older than every key
// of this one.
const lab08Neighbour = lab08Queue + "2/waiting"

// herdNeighbour puts the neighbour queue's key, as another application
// sharing the namespace would: a queue read as "queue" instead of
// "queue/" takes it for the oldest waiter of its own line.
func herdNeighbour(ctx context.Context, run *experiment.Run) error {
	r, err := run.Admin().Put(ctx, lab08Neighbour, "another queue's waiter")
	if err != nil {
		return fmt.Errorf("put the neighbour queue's key %s: %w", lab08Neighbour, err)
	}
	run.Note("etcd took a waiter of a neighbour queue, %s, at %s (revision %d), to wait there the whole run: its name begins with this queue's, but its line is not this one's", strings.TrimSuffix(lab08Neighbour, "/waiting"), lab08Neighbour, r.Header.Revision)
	return nil
}

var lab08Shows = []history.Property{
	{Name: "no-failure", Find: labNoFailure},
	{Name: "one-holder", Find: herdOneHolder},
	{Name: "ticket-kept", Find: herdTicketKept},
	{Name: "turns-go-on", Find: herdTurnsGoOn},
	{Name: "released-on-stop", Find: herdReleasedOnStop},
	{Name: "no-herd", Find: herdNoHerd},
	{Name: "watches-closed", Find: herdWatchesClosed},
}

// herdNoHerd: each key that left the line woke, through the waiters' own
// watches, at most the waiter directly behind it, by etcd's watch of the
// line just before: a release that wakes every waiter is the herd the
// lab exists to avoid.
func herdNoHerd(f *history.Findings) history.Finding {
	hs := history.Herds(f.Events, lab08Owned, herdKeyOwners(f.Events))
	if len(hs) == 0 {
		return holds("Every key that left the line woke at most the waiter directly behind it.")
	}
	h := hs[0]
	next := "nobody waited directly behind it, so no one had to wake"
	if h.Next != "" {
		next = "only " + h.Next + ", directly behind it, had to wake"
	}
	return breaks("herd", h.At, append(slices.Clone(h.Needless), h.Woken...), h.Events,
		"the delete of %s's key %s at revision %d reached the code of %d of the %d other replicas in line through their own watches (%s); %s.",
		orSomeone(h.Owner), h.Key, h.Revision, len(h.Woken), h.Line, strings.Join(h.Woken, ", "), next)
}

// heldAtRev is what etcd held under prefix at revision rev, by the key
// watch (whose events come in revision order).
func heldAtRev(events []history.Event, prefix string, rev int64) map[string]history.StoreKey {
	held := map[string]history.StoreKey{}
	for _, e := range events {
		if e.Kind != history.KeyChanged || e.Facts == nil || e.Facts.Revision > rev {
			continue
		}
		if strings.HasPrefix(e.Facts.Key, prefix) {
			trackHeld(held, e)
		}
	}
	return held
}

// herdOneHolder: when WaitTurn gave a replica its turn, its key was the
// oldest in line, by etcd's watch at the revision the replica read just
// after (a key older than its own held then was held all along, since
// keys are created in revision order), and its token was the key's
// CreateRevision.
//
// And WaitTurn's last answer from etcd before it gave the turn (its
// "turn-read") still showed the waiter's own key by etcd's watch: a turn
// taken on a read at which the key was gone (its lease ran out while the
// waiter was kept from etcd) is a turn with no place in line, while the
// oldest key in line is someone else's.
func herdOneHolder(f *history.Findings) history.Finding {
	owner := herdKeyOwners(f.Events)
	read := map[string]history.Event{}
	for _, e := range f.Events {
		if e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "turn-read" {
			read[e.Replica] = e
		}
		if e.Kind != history.Acquired || e.Facts == nil || e.Facts.Revision == 0 {
			continue
		}
		if r, ok := read[e.Replica]; ok && r.Facts.Key == e.Facts.Key {
			delete(read, e.Replica)
			if fd, bad := herdTurnWithoutKey(f.Events, e, r.Facts.Revision, owner); bad {
				return fd
			}
		}
		held := heldAtRev(f.Events, lab08Owned, e.Facts.Revision)
		mine, ok := held[e.Facts.Key]
		if ok && mine.CreateRevision != e.Token {
			return breaks("wrong-token", e.At, []string{e.Replica}, []history.Event{e}, "%s's turn carries token %d, but its key %s was created at revision %d.", e.Replica, e.Token, e.Facts.Key, mine.CreateRevision)
		}
		if older, ok := oldestBefore(held, e.Token); ok {
			return breaks("two-holders", e.At, []string{e.Replica, owner[older.Key]}, []history.Event{e}, "WaitTurn gave %s its turn (token %d) while etcd still held %s's older key %s (token %d) at revision %d: two replicas held the lock at once.", e.Replica, e.Token, orSomeone(owner[older.Key]), older.Key, older.CreateRevision, e.Facts.Revision)
		}
	}
	return holds("Every turn went to the oldest key in line, by etcd's watch, with that key's CreateRevision as its token.")
}

// herdTurnWithoutKey: turn e was given after WaitTurn's last read, at
// revision rev, by when etcd no longer held the waiter's key.
func herdTurnWithoutKey(events []history.Event, e history.Event, rev int64, owner map[string]string) (history.Finding, bool) {
	held := heldAtRev(events, lab08Owned, rev)
	if _, ok := held[e.Facts.Key]; ok {
		return history.Finding{}, false
	}
	gone := "deleted"
	if d, ok := deletedAt(events, e.Facts.Key, rev); ok {
		gone = fmt.Sprintf("deleted at revision %d", d)
	}
	first := "and nobody else was in line"
	if k, ok := oldestBefore(held, rev+1); ok {
		first = fmt.Sprintf("and the oldest key in line was %s's %s (token %d)", orSomeone(owner[k.Key]), k.Key, k.CreateRevision)
	}
	return breaks("turn-without-key", e.At, []string{e.Replica}, []history.Event{e}, "WaitTurn gave %s its turn (token %d), but at revision %d, its last answer from etcd, its key %s was already gone (%s, by etcd's watch) %s: it holds the lock with no place in line.", e.Replica, e.Token, rev, e.Facts.Key, gone, first), true
}

// deletedAt is the revision at which the watch saw key deleted, at or
// before rev, the last time.
func deletedAt(events []history.Event, key string, rev int64) (int64, bool) {
	var d int64
	for _, e := range events {
		if e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Op == "delete" && e.Facts.Key == key && e.Facts.Revision <= rev {
			d = e.Facts.Revision
		}
	}
	return d, d != 0
}

// oldestBefore is the oldest key created before revision rev.
func oldestBefore(held map[string]history.StoreKey, rev int64) (history.StoreKey, bool) {
	var best history.StoreKey
	for _, k := range held {
		if k.CreateRevision < rev && (best.Key == "" || k.CreateRevision < best.CreateRevision) {
			best = k
		}
	}
	return best, best.Key != ""
}

// herdInLine: the replica's last word on its place is that Enqueue gave
// it one, and WaitTurn has not answered since.
func herdInLine(events []history.Event, name string) bool {
	in := false
	for _, e := range events {
		if e.Replica != name {
			continue
		}
		switch {
		case e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "enqueue":
			in = e.Facts.Succeeded
		case e.Kind == history.Note && e.Facts != nil, e.Kind == history.Acquired, e.Kind == history.Crashed, e.Kind == history.Paused:
			in = false
		}
	}
	return in
}

// herdKeyOwners maps each queue key to the replica that joined the line
// with it (its "enqueue" note).
func herdKeyOwners(events []history.Event) map[string]string {
	out := map[string]string{}
	for _, e := range events {
		if e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "enqueue" && e.Facts.Key != "" {
			out[e.Facts.Key] = e.Replica
		}
	}
	return out
}

func orSomeone(name string) string {
	if name == "" {
		return "another replica"
	}
	return name
}

// herdTicketKept: WaitTurn said ErrTicketLost only when the waiter's key
// was gone, by etcd's watch at the revision of the replica's read just
// after.
func herdTicketKept(f *history.Findings) history.Finding {
	for _, e := range f.Events {
		if e.Kind != history.Note || e.Facts == nil || e.Facts.Op != "ticket-lost" || e.Facts.Revision == 0 {
			continue
		}
		if k, ok := heldAtRev(f.Events, lab08Owned, e.Facts.Revision)[e.Facts.Key]; ok {
			return breaks("ticket-lost-but-held", e.At, []string{e.Replica}, []history.Event{e}, "WaitTurn told %s its key %s was gone (ErrTicketLost), but etcd still held it at revision %d (created at %d): its place in line was thrown away.", e.Replica, e.Facts.Key, e.Facts.Revision, k.CreateRevision)
		}
	}
	return holds("WaitTurn said a ticket was lost only when etcd no longer held its key.")
}

// herdTurnsGoOn: someone got a turn, and while replicas waited in line
// the lock never stood unused for longer than a bound: a holder's key
// outlives it by at most its TTL, and then the next in line must wake.
func herdTurnsGoOn(f *history.Findings) history.Finding {
	bound := 2*time.Duration(f.Params.TTL)*time.Second + 2*time.Second
	stop, stopped := stopAt(f.Events)
	if !stopped && len(f.Events) > 0 {
		stop = f.Events[len(f.Events)-1].At
	}
	if len(f.Terms) == 0 {
		if joined, ok := herdFirstJoin(f.Events); ok && stop-joined > bound {
			return herdMissed(f, joined, stop, bound)
		}
		return breaksRun("no-turn", "WaitTurn never gave any replica its turn.")
	}
	from := f.Terms[0].To
	for _, t := range f.Terms[1:] {
		if t.From-from > bound && from < stop {
			return herdMissed(f, from, t.From, bound)
		}
		from = max(from, t.To)
	}
	if stop-from > bound {
		return herdMissed(f, from, stop, bound)
	}
	return holds(fmt.Sprintf("While replicas waited, a turn came within %s of the last one.", bound))
}

// herdFirstJoin is when a replica first joined the line.
func herdFirstJoin(events []history.Event) (time.Duration, bool) {
	for _, e := range events {
		if e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "enqueue" && e.Facts.Succeeded {
			return e.At, true
		}
	}
	return 0, false
}

func herdMissed(f *history.Findings, from, to time.Duration, bound time.Duration) history.Finding {
	waiting := map[string]bool{}
	for _, e := range f.Events {
		if e.At > from+bound {
			break
		}
		if e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "enqueue" && e.Facts.Succeeded {
			waiting[e.Replica] = true
		}
		if e.Kind == history.Acquired || e.Kind == history.Crashed {
			delete(waiting, e.Replica)
		}
	}
	names := make([]string, 0, len(waiting))
	for n := range waiting {
		names = append(names, n)
	}
	sort.Strings(names)
	who := "replicas"
	if len(names) > 0 {
		who = strings.Join(names, ", ")
	}
	return breaks("missed-turn", from+bound, names, nil, "no replica held the lock from %s to %s (%.1f s, more than %s) while %s waited in line.", at(from), at(to), (to - from).Seconds(), bound, who)
}

// herdReleasedOnStop: told to stop, every replica's queue key was gone
// (released, or taken with its revoked lease) before its loop returned.
func herdReleasedOnStop(f *history.Findings) history.Finding {
	stop, ok := stopAt(f.Events)
	if !ok {
		return holds("The run did not reach its shutdown.")
	}
	owner := herdKeyOwners(f.Events)
	back, gone := map[string]time.Duration{}, map[string]time.Duration{}
	for _, e := range f.Events {
		switch {
		case e.At < stop:
		case e.Kind == history.Note && e.Replica != "" && strings.HasPrefix(e.Text, lab08Returned):
			back[e.Replica] = e.At
		case e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Op == "delete":
			gone[e.Facts.Key] = e.At
		}
	}
	for _, k := range heldAt(&history.History{Events: f.Events}, stop, lab08Owned) {
		name := owner[k.Key]
		ret, ok := back[name]
		if !ok {
			continue
		}
		d, deleted := gone[k.Key]
		if !deleted {
			return breaks("left-behind", ret+labReleaseWait, []string{name}, nil, "%s's loop returned at %s, but etcd still held its queue key %s when the run ended (no lease on it, or a lease nobody revoked).", name, at(ret), k.Key)
		}
		if d-ret > labReleaseWait {
			return breaks("left-behind", ret+labReleaseWait, []string{name}, nil, "%s's loop returned at %s, but its queue key %s went only at %s, when its lease ran out.", name, at(ret), k.Key, at(d))
		}
	}
	if k, ok := leaseOutlived(f.Events); ok {
		return k
	}
	return holds("Told to stop, every replica's queue key was gone before its loop returned, and its leases before its process exited.")
}
