package labrun

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// Lab 09 (shard ownership) as the replicas: each replica process runs the
// learner's Worker over ten shards, reports every change of its Owned(),
// and commits an offset for each shard it owns with the learner's
// CommitOffset and the shard's token (internal/labrun/shards09).
var lab09 = Lab{
	ID: "09_shards", File: "shards.go", Main: "./internal/labrun/shards09",
	scenario: &experiment.Scenario{
		Name:            "lab-09_shards",
		Title:           "your shard workers under faults", // numbered by the course (registry)
		Summary:         "Each replica runs the lab's Worker over " + strconv.Itoa(lab09ShardCount) + " shards and commits an offset for every shard it owns with CommitOffset and the shard's token.",
		Faults:          "the schedule's (pause, cut off, crash, restart a worker that owns shards)",
		DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 7, DefaultTTL: 2,
		Shows: lab09Shows, OwnRules: true, Run: labWithoutSpec,
	},
	prefix:   lab09Group,
	owned:    lab09Shards,
	returned: lab09Returned,
}

// The group's prefix inside the run's namespace, where its shard keys
// and offsets live, and the note a replica sends when Run returned
// (internal/labrun/shards09, labs/09_shards's ShardKey and OffsetKey).
const (
	lab09Group    = "group"
	lab09Shards   = lab09Group + "/shards/"
	lab09Workers  = lab09Group + "/workers/"
	lab09Offsets  = lab09Group + "/offsets/"
	lab09Returned = "Worker.Run returned"
	lab09Started  = "the lab's Worker.Run started"
)

var lab09Shows = []history.Property{
	{Name: "no-failure", Find: labNoFailure},
	{Name: "no-stale-commit", Find: shardsStaleCommit},
	{Name: "one-owner", Find: shardsOneOwner},
	{Name: "owned-again", Find: shardsOwnedAgain},
	{Name: "own-keys-only", Find: shardsOwnKeysOnly},
	{Name: "fair-share", Find: shardsFairShare},
	labReleasedOnStop(lab09Shards, lab09Returned),
	pacedRetries,
}

// shardGrace is how long after etcd deleted a shard's key (or after its
// worker was woken, or after its etcd client's own deadline for the
// lease, if later) the worker may still list the shard: the client checks
// its leases' deadlines once a second.
const shardGrace = 2 * time.Second

// shardsStaleCommit: every offset etcd stored was committed with the
// token of the shard's key at that revision. The commit's offset (unique
// to a replica process) ties the watch's put to the replica and token
// that sent it.
func shardsStaleCommit(f *history.Findings) history.Finding {
	type commit struct {
		replica string
		token   int64
	}
	sent := map[string]commit{} // offset -> who committed it, with which token
	for _, e := range f.Events {
		if e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "commit" && e.Value > 0 {
			sent[strconv.FormatInt(int64(e.Value), 10)] = commit{e.Replica, e.Facts.Token}
		}
	}
	held := map[string]history.StoreKey{}
	for _, e := range f.Events {
		if e.Kind != history.KeyChanged || e.Facts == nil || e.Facts.Held == nil {
			continue
		}
		k := *e.Facts.Held
		if num, ok := strings.CutPrefix(k.Key, lab09Offsets); ok && e.Facts.Op == "put" {
			c, known := sent[k.Value]
			shard := lab09Shards + num
			owner, owned := held[shard]
			if known && (!owned || owner.CreateRevision != c.token) {
				return breaks("stale-commit", e.At, []string{c.replica}, []history.Event{e}, "etcd stored %s's offset %s for shard %s at revision %d with token %d, but %s: CommitOffset let a worker that no longer owned the shard commit.", c.replica, k.Value, num, k.ModRevision, c.token, shardState(shard, owner, owned))
			}
			continue
		}
		trackHeld(held, e)
	}
	return holds("Every offset etcd stored carried the token of the shard's key at that revision.")
}

// shardsOwnKeysOnly: no worker deleted or wrote over a shard key that
// etcd held for another worker (by the key's value, its owner's name): a
// release must be guarded by the releaser's token and a claim must take
// only a free key, or a worker acts on a shard another still owns. Who
// made a change is what etcd answered the worker's own requests (its
// deleted notes) or, for a put, the name it wrote.
func shardsOwnKeysOnly(f *history.Findings) history.Finding {
	ts := history.Takeovers(f.Events, lab09Shards, func(k history.StoreKey) string { return k.Value })
	if len(ts) == 0 {
		return holds("No worker deleted or wrote over a shard key another worker owned.")
	}
	t := ts[0]
	shard := strings.TrimPrefix(t.Key, lab09Shards)
	if t.Deleted {
		return breaks("shard-deleted", t.At, []string{t.Actor, t.Holder}, []history.Event{t.By, t.Change},
			"%s deleted the key of shard %s at revision %d while it was %s's (created at revision %d): a release not guarded by its own token removed another worker's claim, and %s still owns a shard etcd now offers to anyone.",
			t.Actor, shard, t.Revision, t.Holder, t.Token, t.Holder)
	}
	return breaks("shard-overwritten", t.At, []string{t.Actor, t.Holder}, []history.Event{t.By, t.Change},
		"%s wrote over the key of shard %s at revision %d while it was %s's (created at revision %d): a claim that did not check the key was free took a shard another worker still owns.",
		t.Actor, shard, t.Revision, t.Holder, t.Token)
}

func shardState(key string, k history.StoreKey, held bool) string {
	if !held {
		return fmt.Sprintf("etcd held no key %s then", key)
	}
	return fmt.Sprintf("the shard's key %s was %s's, created at revision %d", key, k.Value, k.CreateRevision)
}

// shardBelief is a shard as one worker's Owned() listed it.
type shardBelief struct {
	replica, key string
	token        int64
	from, to     time.Duration
	open         bool
}

// shardBeliefs reads the replicas' own/disown notes (a crash ends them
// all: the process is gone).
func shardBeliefs(events []history.Event) []shardBelief {
	open := map[string]*shardBelief{} // replica + key
	var out []shardBelief
	end := func(b *shardBelief, t time.Duration) {
		b.to, b.open = t, false
		out = append(out, *b)
	}
	for _, e := range events {
		switch {
		case e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "own":
			open[e.Replica+" "+e.Facts.Key] = &shardBelief{replica: e.Replica, key: e.Facts.Key, token: e.Facts.Token, from: e.At, open: true}
		case e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "disown":
			if b := open[e.Replica+" "+e.Facts.Key]; b != nil {
				end(b, e.At)
				delete(open, e.Replica+" "+e.Facts.Key)
			}
		case e.Kind == history.Crashed:
			for id, b := range open {
				if b.replica == e.Replica {
					end(b, e.At)
					delete(open, id)
				}
			}
		}
	}
	last := time.Duration(0)
	if len(events) > 0 {
		last = events[len(events)-1].At
	}
	for _, b := range open {
		b.to = last
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}

// shardsOneOwner: a worker stops listing a shard soon after etcd deleted
// the key it owned it by (soon after it was woken, if it was paused, or
// after its etcd client's own deadline for the key's lease, if later):
// until then two workers may think the shard is theirs.
func shardsOneOwner(f *history.Findings) history.Finding {
	gone := map[string][]shardGone{} // key@token -> when etcd deleted it
	woke := map[string]time.Duration{}
	next := map[string][]string{} // key@token -> who etcd gave the shard to next
	var lastDel = map[string]string{}
	for _, e := range f.Events {
		switch {
		case e.Kind == history.Resumed:
			woke[e.Replica] = e.At
		case e.Kind == history.KeyChanged && e.Facts != nil && strings.HasPrefix(e.Facts.Key, lab09Shards):
			if e.Facts.Op == "delete" && len(e.Facts.Prev) == 1 {
				id := fmt.Sprintf("%s@%d", e.Facts.Key, e.Facts.Prev[0].CreateRevision)
				gone[id] = append(gone[id], shardGone{e.At, e.Facts.Prev[0].Lease})
				lastDel[e.Facts.Key] = id
			} else if e.Facts.Op == "put" && e.Facts.Held != nil && lastDel[e.Facts.Key] != "" {
				id := lastDel[e.Facts.Key]
				next[id] = append(next[id], e.Facts.Held.Value)
				delete(lastDel, e.Facts.Key)
			}
		}
	}
	var trusted trustedBeliefs // kept past shardGrace by the client's deadline
	for _, b := range shardBeliefs(f.Events) {
		id := fmt.Sprintf("%s@%d", b.key, b.token)
		ds := gone[id]
		if len(ds) == 0 || ds[0].at < b.from {
			continue
		}
		from, shard := max(ds[0].at, woke[b.replica]), strings.TrimPrefix(b.key, lab09Shards)
		why := ""
		if dl, said, ok := clientDeadline(f.Events, b.replica, ds[0].lease, ds[0].at); ok && dl > from {
			from, why = dl, fmt.Sprintf(", and %.1f s after its client's own deadline for the lease: %s", (b.to-dl).Seconds(), said)
			if b.to > ds[0].at+shardGrace {
				trusted.add(b.replica, shard, said, b.to-ds[0].at)
			}
		}
		if late := b.to - from; late > shardGrace {
			then, who := "", []string{b.replica}
			if n := next[id]; len(n) > 0 {
				then, who = fmt.Sprintf(", and gave the shard to %s", n[0]), append(who, n[0])
			}
			still := "when the run ended"
			if !b.open {
				still = "until " + at(b.to)
			}
			return breaks("two-owners", from+shardGrace, who, nil, "%s's Owned() still listed shard %s (token %d) %s, %.1f s after etcd deleted that key at %s%s%s.", b.replica, shard, b.token, still, (b.to - ds[0].at).Seconds(), at(ds[0].at), why, then)
		}
	}
	held := fmt.Sprintf("Every worker stopped listing a shard within %s of etcd deleting its key", shardGrace)
	if len(trusted) > 0 {
		return holds(held + ", or of its etcd client's own deadline for the key's lease (" + trusted.String() + ").")
	}
	return holds(held + ".")
}

// trustedBeliefs are the shards workers listed past shardGrace after etcd
// deleted them, within their client's deadline, by worker and lease.
type trustedBeliefs []*trustedBelief

type trustedBelief struct {
	replica, said string
	shards        []string
	longest       time.Duration
}

func (t *trustedBeliefs) add(replica, shard, said string, late time.Duration) {
	for _, b := range *t {
		if b.replica == replica && b.said == said {
			b.shards, b.longest = append(b.shards, shard), max(b.longest, late)
			return
		}
	}
	*t = append(*t, &trustedBelief{replica: replica, said: said, shards: []string{shard}, longest: late})
}

func (t trustedBeliefs) String() string {
	out := make([]string, len(t))
	for i, b := range t {
		out[i] = fmt.Sprintf("%s listed shards %s up to %.1f s after etcd deleted them: %s", b.replica, strings.Join(b.shards, ", "), b.longest.Seconds(), b.said)
	}
	return strings.Join(out, "; ")
}

// shardGone is a shard key's deletion by etcd, with the lease it had.
type shardGone struct {
	at    time.Duration
	lease int64
}

// clientDeadline is when, by what it had been told before t, who's etcd
// client took lease to run out (replica.keepAlives): a TTL after the
// last keep-alive answer it received, or, before any answer, the trust
// it gives a lease from its first KeepAlive call. said puts it in words.
// ok is false when the history says nothing of the lease's keep-alives.
func clientDeadline(events []history.Event, who string, lease int64, t time.Duration) (dl time.Duration, said string, ok bool) {
	var answered bool
	for _, e := range events {
		if e.At > t {
			break
		}
		if e.Replica != who || e.Facts == nil || e.Facts.Lease != lease || lease == 0 {
			continue
		}
		switch {
		case e.Kind == history.Note && e.Facts.Op == "keepalive-start" && !answered:
			trust := time.Duration(e.Value * float64(time.Second)) // replica.FirstKeepAliveTrust
			dl, ok = e.At+trust, true
			said = fmt.Sprintf("etcd had answered none of lease %x's keep-alives since it began at %s, and until then the client takes a lease to live %.0f s, so it trusted it until %s", lease, at(e.At), trust.Seconds(), at(dl))
		case e.Kind == history.LeaseRenewed && e.Facts.Op == "keepalive":
			answered, ok = true, true
			dl = e.At + time.Duration(e.Facts.GrantedTTL)*time.Second
			said = fmt.Sprintf("etcd's last answer to a keep-alive of lease %x reached it at %s and gave the lease %d s, so it trusted it until %s", lease, at(e.At), e.Facts.GrantedTTL, at(dl))
		case e.Kind == history.LeaseExpired:
			answered, ok = true, true
			dl, said = e.At, fmt.Sprintf("etcd told it at %s that lease %x was gone", at(e.At), lease)
		}
	}
	return dl, said, ok
}

// leaderMoveGrace is etcd's request timeout on the in-process cluster
// (5 s and two 500 ms election timeouts): a request whose proposal the
// moving raft leader dropped is answered, with an error, only then, so a
// worker's claim can stand that long through no fault of its code.
const leaderMoveGrace = 6 * time.Second

// shardBound is how long lab 09's rules let the shards stand unsettled:
// TTL + 2 s, and leaderMoveGrace more (with why, for the sentence) when
// etcd's raft leader moved from a bound before from until now; moved
// says whether it moved at all in the run.
func shardBound(f *history.Findings) (bound time.Duration, boundFor func(from, now time.Duration) (time.Duration, string), moved bool) {
	bound = time.Duration(f.Params.TTL)*time.Second + 2*time.Second
	var moves []time.Duration
	for _, e := range f.Events {
		if e.Kind == history.LeaderMoved {
			moves = append(moves, e.At)
		}
	}
	boundFor = func(from, now time.Duration) (time.Duration, string) {
		for _, m := range moves {
			if m >= from-bound && m <= now {
				return bound + leaderMoveGrace, fmt.Sprintf(" (TTL + 2 s, and %s for etcd's raft leader moving at %s)", leaderMoveGrace, at(m))
			}
		}
		return bound, ""
	}
	return bound, boundFor, len(moves) > 0
}

// shardsOwnedAgain: no shard stood without an owner, by etcd's watch,
// for longer than TTL + 2 s while the workers ran (from the first
// worker's start, or from when its key was deleted), up to the shutdown;
// leaderMoveGrace longer when etcd's raft leader moved from a bound
// before the shard came free until then.
func shardsOwnedAgain(f *history.Findings) history.Finding {
	bound, boundFor, moved := shardBound(f)
	start, ok := f.FirstEvent(func(e history.Event) bool {
		return e.Kind == history.Note && strings.HasPrefix(e.Text, lab09Started)
	})
	if !ok {
		return holds("No worker ran.")
	}
	stop, stopped := stopAt(f.Events)
	if !stopped {
		stop = f.Events[len(f.Events)-1].At
	}
	free := map[string]time.Duration{} // shard key -> since when it had no owner
	last := map[string]string{}        // shard key -> its last owner
	for i := 0; i < lab09ShardCount; i++ {
		free[fmt.Sprintf("%s%03d", lab09Shards, i)] = start.At
	}
	check := func(now time.Duration) (history.Finding, bool) {
		for _, k := range sortedFree(free) {
			b, why := boundFor(free[k], now)
			if now-free[k] <= b {
				continue
			}
			since := "since the first worker started"
			if o := last[k]; o != "" {
				since = "since " + o + "'s key for it was deleted"
			}
			live, ran := liveWorkers(f.Events, now), "no worker"
			if len(live) > 0 {
				ran = strings.Join(live, ", ")
			}
			return breaks("unowned", free[k]+b, append([]string{last[k]}, live...), nil, "shard %s had no owner in etcd from %s (%s) for more than %s%s while %s ran: its work stood still.", strings.TrimPrefix(k, lab09Shards), at(free[k]), since, b, why, ran), true
		}
		return history.Finding{}, false
	}
	for _, e := range f.Events {
		if e.At > stop {
			break
		}
		if fd, bad := check(e.At); bad {
			return fd
		}
		if e.Kind != history.KeyChanged || e.Facts == nil || !strings.HasPrefix(e.Facts.Key, lab09Shards) {
			continue
		}
		if e.Facts.Op == "delete" {
			free[e.Facts.Key] = e.At
			if len(e.Facts.Prev) == 1 {
				last[e.Facts.Key] = e.Facts.Prev[0].Value
			}
		} else {
			delete(free, e.Facts.Key)
		}
	}
	if fd, bad := check(stop); bad {
		return fd
	}
	if moved {
		return holds(fmt.Sprintf("Every shard had an owner again within %s of losing one (%s when etcd's raft leader moved meanwhile).", bound, bound+leaderMoveGrace))
	}
	return holds(fmt.Sprintf("Every shard had an owner again within %s of losing one.", bound))
}

// shardsFairShare: every member etcd listed owned its fair share of the
// shards (by rank among the members' names, byte order: the shard count
// over the members, and one more for the first ones while any remain)
// within TTL + 2 s of the last change to the members or the shards, up
// to the shutdown (6 s more when etcd's raft leader moved meanwhile). A
// worker that never learnt of a change (a watch opened after the read
// it follows, from "now") keeps what it has while nothing else changes:
// the share it should give back, or take, stays where it is. Judged on
// etcd's keys alone: a shard is a member's by its value (the owner's
// name) or by its lease (the member key's).
func shardsFairShare(f *history.Findings) history.Finding {
	bound, boundFor, _ := shardBound(f)
	stop, stopped := stopAt(f.Events)
	if !stopped && len(f.Events) > 0 {
		stop = f.Events[len(f.Events)-1].At
	}
	members := map[string]int64{}           // member name -> its key's lease
	shards := map[string]history.StoreKey{} // shard key -> what etcd held
	changed := time.Duration(-1)
	check := func(now time.Duration) (history.Finding, bool) {
		if changed < 0 || len(members) == 0 {
			return history.Finding{}, false
		}
		b, why := boundFor(changed, now)
		if now-changed <= b {
			return history.Finding{}, false
		}
		if who, said, unfair := unfairShares(members, shards); unfair {
			return breaks("unbalanced", changed+b, who, nil, "from %s, the last change to the members or the shards, to %s etcd held %s; the fair share of %d shards over %d members is %s: no worker gave back or took what the change asked of it for more than %s%s.",
				at(changed), at(changed+b), said, lab09ShardCount, len(members), fairSaid(members), b, why), true
		}
		return history.Finding{}, false
	}
	for _, e := range f.Events {
		if e.At > stop {
			break
		}
		if e.Kind != history.KeyChanged || e.Facts == nil || e.Facts.Held == nil {
			continue
		}
		k := e.Facts.Key
		if !strings.HasPrefix(k, lab09Workers) && !strings.HasPrefix(k, lab09Shards) {
			continue
		}
		if fd, bad := check(e.At); bad {
			return fd
		}
		changed = e.At
		switch {
		case strings.HasPrefix(k, lab09Workers) && e.Facts.Op == "delete":
			delete(members, strings.TrimPrefix(k, lab09Workers))
		case strings.HasPrefix(k, lab09Workers):
			members[strings.TrimPrefix(k, lab09Workers)] = e.Facts.Held.Lease
		case e.Facts.Op == "delete":
			delete(shards, k)
		default:
			shards[k] = *e.Facts.Held
		}
	}
	if fd, bad := check(stop); bad {
		return fd
	}
	return holds(fmt.Sprintf("Every member owned its fair share of the shards within %s of each change.", bound))
}

// fairShares are the members' names in rank order and each one's share.
func fairShares(members map[string]int64) ([]string, map[string]int) {
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	share := map[string]int{}
	for i, n := range names {
		share[n] = lab09ShardCount / len(names)
		if i < lab09ShardCount%len(names) {
			share[n]++
		}
	}
	return names, share
}

// unfairShares says whether a member owns other than its share, naming
// those that do and what each owned.
func unfairShares(members map[string]int64, shards map[string]history.StoreKey) ([]string, string, bool) {
	names, share := fairShares(members)
	owned := map[string]int{}
	for _, kv := range shards {
		for _, n := range names {
			if kv.Value == n || (kv.Lease != 0 && kv.Lease == members[n]) {
				owned[n]++
				break
			}
		}
	}
	var who, said []string
	for _, n := range names {
		said = append(said, fmt.Sprintf("%s %d", n, owned[n]))
		if owned[n] != share[n] {
			who = append(who, n)
		}
	}
	return who, strings.Join(said, ", "), len(who) > 0
}

// fairSaid writes each member's share: "r1 4, r2 3, r3 3".
func fairSaid(members map[string]int64) string {
	names, share := fairShares(members)
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("%s %d", n, share[n]))
	}
	return strings.Join(out, ", ")
}

// liveWorkers are the replicas that had started the lab's Worker by t
// and not crashed since.
func liveWorkers(events []history.Event, t time.Duration) []string {
	live := map[string]bool{}
	for _, e := range events {
		if e.At > t {
			break
		}
		switch {
		case e.Kind == history.Note && strings.HasPrefix(e.Text, lab09Started):
			live[e.Replica] = true
		case e.Kind == history.Crashed:
			delete(live, e.Replica)
		}
	}
	out := make([]string, 0, len(live))
	for n := range live {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// lab09ShardCount is how many shards the replicas share.
const lab09ShardCount = replica.Shards

func sortedFree(free map[string]time.Duration) []string {
	out := make([]string, 0, len(free))
	for k := range free {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
