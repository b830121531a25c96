package timeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// The timeline is the run's history as columns a cursor moves through:
// one column per event that changes the story, and one per stretch of
// routine events between two of them (lease renewals, one owner's
// accepted writes, key changes that leave etcd's holder as it was),
// folded into counts. For every column it keeps what each replica
// believed and what etcd held once that column had happened, so the
// lanes, the replica cards and "etcd holds" can show any instant.

// item is one column of the timeline.
type item struct {
	first, last int // the events it stands for (indices into timeline.events)
	fold        *fold
}

// fold counts the routine events of a folded column.
type fold struct {
	counts map[history.Kind]int
	writer string // whose accepted writes it folds ("" none yet)
	token  int64  // ... and with which token
}

// belief is what one replica believed at an instant, from its own events.
type belief struct {
	seen                 bool
	role                 history.Role
	token                int64
	paused, cut, crashed bool
	gone                 bool          // retired: its part of the run is over
	stalledUntil         time.Duration // its network stalls until then
	leased               bool
	ttl                  int64
	renewed              time.Duration // its lease was last granted or renewed then
	clock                float64
	wrote, refused       bool // in this column
	violated             bool // ... a finding of the checker's marks it (markFindings)
	acquired             bool // in this column
	// member: the lane is an etcd member whose raft status the run
	// reads; term is the raft term it reported last (its token is the
	// term it leads in, while it leads).
	member bool
	term   uint64
}

// leaseLeft is the time the replica believes its lease has at t.
func (b belief) leaseLeft(t time.Duration) time.Duration {
	if !b.leased || b.ttl <= 0 {
		return 0
	}
	return max(0, time.Duration(b.ttl)*time.Second-(t-b.renewed))
}

// holding is what etcd held under the run's prefix at an instant.
type holding struct {
	keys   []history.StoreKey // oldest first
	holder string             // the oldest key's value in the group last changed
	queue  bool               // that group is a lock or an election (one key each)
	rev    int64              // the revision of the last change seen
	down   int                // etcd members stopped
	leader string             // the member raft leadership last moved to ("" none seen)
	moved  bool               // ... in this column
}

// timeline is a run's history, folded into columns.
type timeline struct {
	events []history.Event
	items  []item
	lanes  []string   // replica names, in the order they first appear
	states [][]belief // after each item, one per lane
	holds  []holding  // after each item
	// res is the protected resource after each item, as the history's
	// writes and switches leave it.
	res []history.ResourceState
	// truth is, for an item that shows two owners at once, whose key etcd
	// held then, as the checker found it (markFindings).
	truth map[int]string
	// ownRules: the run's scenario judges ownership by rules of its own
	// (a lab run: Scenario.OwnRules), so the marks are its violations,
	// not the generic checker's findings.
	ownRules bool
}

// laneIndex is each lane's index, by replica name.
func (tl timeline) laneIndex() map[string]int {
	lane := make(map[string]int, len(tl.lanes))
	for i, n := range tl.lanes {
		lane[n] = i
	}
	return lane
}

// routine reports whether e folds into a count rather than a column of
// its own; skip, whether it is left out of the timeline altogether (the
// script's waiting lines, which the hint says better, and the verdict).
func routine(e history.Event) (fold, skip bool) {
	switch e.Kind {
	case history.Waiting, history.Finished:
		return false, true
	case history.LeaseRenewed, history.LeaseGranted, history.WriteAccepted,
		history.ShardClaimed, history.KeyChanged:
		return true, false
	}
	return false, false
}

// replicaEvent reports whether e is about one of the run's replicas
// (rather than an etcd member, or nobody).
func replicaEvent(e history.Event) bool {
	switch e.Kind {
	case history.MemberStopped, history.MemberRestarted, history.LeaderMoved, history.KeyChanged:
		return false
	}
	return e.Replica != ""
}

// buildTimeline folds events into columns and works out every column's
// state. names are the run's replicas in creation order (lanes come in
// that order, then any other replica the events name); retired are those
// whose part of the run is over, whose lanes end after their last event.
func buildTimeline(events []history.Event, names []string, retired map[string]bool, ownRules bool) timeline {
	tl := timeline{events: events, lanes: lanesOf(events, names), ownRules: ownRules}
	lane := tl.laneIndex()
	lastOf := lastSeen(events)
	cur := make([]belief, len(tl.lanes))
	var hold holding
	res := history.InitialResource()
	held, down, goneNext := map[string]history.StoreKey{}, map[string]bool{}, map[int]bool{}
	for i, e := range events {
		isFold, skip := routine(e)
		if skip {
			continue
		}
		prev := hold
		if e.Kind == history.KeyChanged {
			hold = applyKey(held, e, hold, tl.lanes)
			isFold = hold.holder == prev.holder
		}
		hold.down = membersDown(down, e)
		if !tl.joins(e, isFold) {
			tl.closeLast(cur, prev, res) // res: before e
			tl.open(i, isFold, cur)
			hold.moved = false
			for l := range goneNext {
				cur[l].gone = true // from the column after its last event
			}
			clear(goneNext)
		}
		tl.extend(i, e)
		if e.Kind == history.LeaderMoved || reportsLeading(e) && hold.leader != e.Replica {
			hold.leader, hold.moved = e.Replica, true
		}
		if e.Kind == history.PartBegins {
			newCluster(cur, &hold)
		}
		res = res.After(e)
		if l, ok := lane[e.Replica]; ok && replicaEvent(e) {
			cur[l] = apply(cur[l], e)
		}
		if l, ok := campaigner(e, lane); ok {
			cur[l] = campaigning(cur[l])
		}
		for l, name := range tl.lanes {
			if retired[name] && lastOf[name] == i {
				goneNext[l] = true
			}
		}
	}
	tl.closeLast(cur, hold, res)
	tl.markFindings()
	return tl
}

// reportsLeading reports whether e is an etcd member saying that it is
// the raft leader: etcd's lane names it as the leader from then on.
func reportsLeading(e history.Event) bool {
	return e.Kind == history.LeaderObserved && e.Facts != nil && e.Facts.Op == "status" && e.Facts.Leader != "" && e.Facts.Leader == e.Replica
}

// newCluster forgets the members at the start of a part: a scenario
// that reads members' status starts a cluster of its own for each part,
// whose members only share the names of the last part's.
func newCluster(cur []belief, hold *holding) {
	for l := range cur {
		if cur[l].member {
			cur[l] = belief{}
		}
	}
	hold.leader = ""
}

// closeLast records the state the last item left, once it is complete.
func (tl *timeline) closeLast(cur []belief, h holding, res history.ResourceState) {
	if len(tl.items) > len(tl.states) {
		tl.states = append(tl.states, append([]belief(nil), cur...))
		tl.holds = append(tl.holds, h)
		tl.res = append(tl.res, res)
	}
}

// campaigner is the lane of the replica whose campaign key etcd's watch
// saw put by e: a key named after its lease, in a line (an election or a
// lock queue), holding the replica's name.
func campaigner(e history.Event, lane map[string]int) (int, bool) {
	f := e.Facts
	if e.Kind != history.KeyChanged || f == nil || f.Op != "put" || f.Held == nil || f.Held.Lease == 0 || f.Held.Version != 1 {
		return 0, false
	}
	if !strings.HasSuffix(f.Key, "/"+fmt.Sprintf("%016x", f.Held.Lease)) {
		return 0, false
	}
	l, ok := lane[f.Held.Value]
	return l, ok
}

// campaigning is b once etcd holds its key in a line: a candidate, unless
// it already owns, or is down or gone.
func campaigning(b belief) belief {
	if b.role == history.RoleOwner || b.crashed || b.gone {
		return b
	}
	b.seen, b.role = true, history.RoleCandidate
	return b
}

// lastSeen is, for each replica, the index of the last event that shows
// it in the run: its own, or etcd deleting a key that held its name (an
// electing replica renews quietly and says nothing when its part of the
// run is over, but its key goes then).
func lastSeen(events []history.Event) map[string]int {
	last := map[string]int{}
	for i, e := range events {
		if _, skip := routine(e); skip {
			continue
		}
		switch {
		case replicaEvent(e):
			last[e.Replica] = i
		case e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Op == "delete":
			for _, k := range e.Facts.Prev {
				last[k.Value] = i
			}
		}
	}
	return last
}

// membersDown records a member stopped or restarted by e and counts
// those down.
func membersDown(down map[string]bool, e history.Event) int {
	switch e.Kind {
	case history.MemberStopped:
		down[e.Replica] = true
	case history.MemberRestarted:
		delete(down, e.Replica)
	}
	return len(down)
}

// lanesOf is names, then every other replica the events name.
func lanesOf(events []history.Event, names []string) []string {
	out := append([]string(nil), names...)
	for _, e := range events {
		if replicaEvent(e) && !slices.Contains(out, e.Replica) {
			out = append(out, e.Replica)
		}
	}
	return out
}

// joins reports whether e goes into the last column: a routine event
// into a fold, unless it is an accepted write by another writer or token
// than the fold's.
func (tl *timeline) joins(e history.Event, isFold bool) bool {
	if !isFold || len(tl.items) == 0 {
		return false
	}
	f := tl.items[len(tl.items)-1].fold
	if f == nil {
		return false
	}
	if e.Kind == history.WriteAccepted && f.writer != "" && (f.writer != e.Replica || f.token != e.Token) {
		return false
	}
	return true
}

// open starts a column at event i: a fold or a single event (after
// closeLast recorded the previous one). Marks of the previous column (a
// write, an acquisition) do not carry over.
func (tl *timeline) open(i int, isFold bool, cur []belief) {
	it := item{first: i, last: i}
	if isFold {
		it.fold = &fold{counts: map[history.Kind]int{}}
	}
	tl.items = append(tl.items, it)
	for l := range cur {
		cur[l].wrote, cur[l].refused, cur[l].violated, cur[l].acquired = false, false, false, false
	}
}

// extend adds event i to the last column.
func (tl *timeline) extend(i int, e history.Event) {
	it := &tl.items[len(tl.items)-1]
	it.last = i
	if f := it.fold; f != nil {
		f.counts[e.Kind]++
		if e.Kind == history.WriteAccepted && f.writer == "" {
			f.writer, f.token = e.Replica, e.Token
		}
	}
}

// apply is b after the replica's event e.
func apply(b belief, e history.Event) belief {
	b.seen = true
	switch e.Kind {
	case history.LeaseGranted, history.LeaseRenewed:
		b.leased, b.renewed = true, e.At
		if ttl := grantedTTL(e); ttl > 0 {
			b.ttl = ttl
		}
	case history.LeaseExpired:
		b.leased = false
		if b.role == history.RoleOwner {
			b.role = history.RoleSteppedDown
		}
	case history.Acquired:
		b.role, b.token, b.acquired = history.RoleOwner, e.Token, true
	case history.Lost, history.SteppedDown:
		b.role = history.RoleSteppedDown
	case history.Released:
		b.role, b.token = history.RoleFollower, 0
	case history.ShardClaimed:
		// A worker owns shards, not the whole; one that had given all
		// its shards up (stepped down) owns some again.
		if b.role == "" || b.role == history.RoleFollower || b.role == history.RoleSteppedDown {
			b.role = history.RoleWorker
		}
	case history.WriteAccepted:
		b.wrote = true
	case history.WriteRejected:
		b.refused = true
	case history.LeaderObserved:
		b = memberStatus(b, e)
	}
	return applyFault(b, e)
}

// memberStatus is member b after it reported its raft status (e's
// facts): the leader when it names itself, with the term it leads in
// drawn like a token where that term begins; a follower when it names
// another; no leader while it names none.
func memberStatus(b belief, e history.Event) belief {
	f := e.Facts
	if f == nil || f.Op != "status" {
		return b
	}
	b.member = true
	switch {
	case f.Leader == e.Replica:
		if b.role != history.RoleRaftLeader || b.term != f.RaftTerm {
			b.acquired, b.token = true, int64(f.RaftTerm)
		}
		b.role = history.RoleRaftLeader
	case f.Leader == "":
		b.role, b.token = history.RoleNoLeader, 0
	default:
		b.role, b.token = history.RoleRaftFollower, 0
	}
	b.term = f.RaftTerm
	return b
}

// applyFault is b after a fault done to the replica.
func applyFault(b belief, e history.Event) belief {
	switch e.Kind {
	case history.Paused:
		b.paused = true
	case history.Resumed:
		b.paused = false
	case history.Partitioned:
		b.cut = true
	case history.Healed:
		b.cut = false
	case history.Stalled:
		b.stalledUntil = e.At + time.Duration(e.Value*float64(time.Second))
	case history.Crashed:
		b.crashed, b.leased, b.role = true, false, history.RoleCrashed
	case history.Restarted:
		b.crashed, b.role, b.token = false, history.RoleFollower, 0
	case history.ClockChanged:
		b.clock = e.Value
	}
	return b
}

// grantedTTL is the TTL etcd granted or renewed a lease with, by the
// event's facts where it has them.
func grantedTTL(e history.Event) int64 {
	if e.Facts != nil && e.Facts.GrantedTTL > 0 {
		return e.Facts.GrantedTTL
	}
	return e.TTL
}

// applyKey records a key change the run's watch saw and works out who
// etcd holds as the owner now, from the keys whose values name a replica
// (lanes): a change to other keys (lab 09's offsets and members) leaves
// the holder as it was.
func applyKey(held map[string]history.StoreKey, e history.Event, h holding, lanes []string) holding {
	f := e.Facts
	if f == nil || f.Held == nil {
		return h
	}
	names := f.Held.Value
	if f.Op == "delete" && len(f.Prev) > 0 {
		names = f.Prev[0].Value
	}
	if f.Op == "delete" {
		delete(held, f.Key)
	} else {
		held[f.Key] = *f.Held
	}
	h.rev = max(h.rev, f.Revision, f.Held.ModRevision)
	h.keys = make([]history.StoreKey, 0, len(held))
	for _, k := range held {
		h.keys = append(h.keys, k)
	}
	sort.Slice(h.keys, func(a, b int) bool { return h.keys[a].CreateRevision < h.keys[b].CreateRevision })
	if f.Op == "delete" && len(f.Prev) == 0 || slices.Contains(lanes, names) {
		h.holder, h.queue = holderOf(h.keys, dirOf(f.Key))
	}
	return h
}

// dirOf is the group a key belongs to: what comes before its last "/",
// or the key itself.
func dirOf(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1]
	}
	return key
}

// holderOf is the value of the oldest key in group dir (keys oldest
// first), the owner of a lock or an election, and whether the group is
// one (each key its own value); "" when the group is empty.
func holderOf(keys []history.StoreKey, dir string) (string, bool) {
	holder, values, n := "", map[string]bool{}, 0
	for _, k := range keys {
		if dirOf(k.Key) != dir {
			continue
		}
		if n == 0 {
			holder = k.Value
		}
		n++
		values[k.Value] = true
	}
	return holder, n > 0 && len(values) == n
}

// at is the time of item i: when its last event happened.
func (tl timeline) at(i int) time.Duration { return tl.events[tl.items[i].last].At }

// keyEvent reports whether an event is one the run exists to show: an
// invariant broken (two owners, a stale write accepted) or a stale write
// refused.
func keyEvent(e history.Event) bool {
	return e.Kind == history.InvariantViolated || e.Kind == history.WriteRejected
}

// keyItem reports whether item i is an event the run exists to show: a
// violation (two owners, a stale write accepted) or a refused write.
func (tl timeline) keyItem(i int) bool {
	it := tl.items[i]
	return it.fold == nil && keyEvent(tl.events[it.first])
}

// keyItems counts the violations and the refusals.
func (tl timeline) keyItems() (violations, refusals int) {
	for i, it := range tl.items {
		if !tl.keyItem(i) {
			continue
		}
		if tl.events[it.first].Kind == history.InvariantViolated {
			violations++
		} else {
			refusals++
		}
	}
	return violations, refusals
}

// nextKey is the first key item after i, wrapping round; -1 if none.
func (tl timeline) nextKey(i int) int {
	n := len(tl.items)
	for d := 1; d <= n; d++ {
		if j := (i + d) % n; tl.keyItem(j) {
			return j
		}
	}
	return -1
}

// focus is the item a finished run ends its cursor on: the one holding
// the event of the instant at the checker's verdict is about
// (scenario.Focus), a violation or refusal of that instant before any
// other column of it; the last item when the verdict points at nothing
// (ok false).
func (tl timeline) focus(at time.Duration, ok bool) int {
	if !ok || len(tl.items) == 0 {
		return len(tl.items) - 1
	}
	best, rank := -1, 0
	for i, it := range tl.items {
		for j := it.first; j <= it.last; j++ {
			if tl.events[j].At != at {
				continue
			}
			r := 1
			switch {
			case tl.keyItem(i):
				r = 3
			case it.fold == nil:
				r = 2
			}
			if r > rank {
				best, rank = i, r
			}
		}
	}
	if best < 0 {
		return len(tl.items) - 1
	}
	return best
}
