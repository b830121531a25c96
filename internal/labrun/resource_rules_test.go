package labrun

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// The rules that judge what the resource saw, on histories written by
// hand: lab 06's no-clobber (the holder's data deleted or overwritten by
// another replica) and lab 08's no-herd (one release waking waiters
// further back than the next in line), each named in the verdict, its
// findings and --json's violations the same way as every other rule.

// wrote is a fenced06 replica's report of one Write: what it returned
// and the revisions its requests changed etcd at, by etcd's answers.
func wrote(at int, who string, kind history.Kind, token, rev int64, changed ...int64) history.Event {
	return history.Event{At: ms(at), Kind: kind, Replica: who, Token: token,
		Facts: &history.Facts{Op: "write", Key: lab06Data, Revision: rev, Succeeded: kind == history.WriteAccepted, Changed: changed}}
}

// lab06Turn: r2 holds the lock (token 10) and its Write put its value
// at 11.
func lab06Turn() []history.Event {
	return []history.Event{
		lockPut(10, lab06Lock, "r2", 10, 10, 1), {At: ms(10), Kind: history.Acquired, Replica: "r2", Token: 10},
		lockPut(11, lab06Data, "r2 token 10 write 1", 11, 11, 1), wrote(11, "r2", history.WriteAccepted, 10, 11, 11),
	}
}

func TestLab06NoClobber(t *testing.T) {
	ok, say := judged(t, lab06NoClobber, 2, lab06Turn()...)
	wantHeld(t, ok, say)
	// r1, its turn long over, writes with its old token: refused, and
	// its Else branch deletes the data.
	events := append(lab06Turn(), wrote(20, "r1", history.WriteRejected, 4, 12, 12), lockDelete(21, lab06Data, "r2 token 10 write 1", 12, 11))
	ok, say = judged(t, lab06NoClobber, 2, events...)
	wantNamed(t, ok, say, "clobbered")
	for _, w := range []string{"r1 deleted fenced/data at revision 12", "what r2 wrote with token 10 at revision 11", "still r2's"} {
		if !strings.Contains(say, w) {
			t.Fatalf("the sentence lacks %q: %s", w, say)
		}
	}
	// Its Else branch puts an empty value instead: overwritten.
	events = append(lab06Turn(), wrote(20, "r1", history.WriteRejected, 4, 12, 12), lockPut(21, lab06Data, "", 12, 11, 2))
	ok, say = judged(t, lab06NoClobber, 2, events...)
	wantNamed(t, ok, say, "clobbered")
	if !strings.Contains(say, "r1 overwrote") {
		t.Fatalf("the overwrite is not said: %s", say)
	}
	// The holder writing again, and a refused Write that changed
	// nothing (answered at the revision of the holder's last put), are
	// no clobber.
	events = append(lab06Turn(), wrote(20, "r1", history.WriteRejected, 4, 11),
		lockPut(21, lab06Data, "r2 token 10 write 2", 12, 11, 2), wrote(21, "r2", history.WriteAccepted, 10, 12, 12))
	ok, say = judged(t, lab06NoClobber, 2, events...)
	wantHeld(t, ok, say)
}

// A clobber makes the lab's verdict a violation, with its finding in
// the verdict and in --json's violations: no path of its own.
func TestLab06ClobberInTheVerdict(t *testing.T) {
	events := append(lab06Turn(), wrote(20, "r1", history.WriteRejected, 4, 12, 12), lockDelete(21, lab06Data, "r2 token 10 write 1", 12, 11))
	h := history.History{Scenario: lab06.scenario.Name, Params: history.Params{TTL: 2}, Events: events}
	v := history.Judge(&h, lab06.scenario.Shows, nil)
	v.Rules = true
	r := history.NewReport(v, nil, time.Second)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Outcome    string `json:"outcome"`
		Exit       int    `json:"exit"`
		Violations []struct {
			Property, Violation string
			Replicas            []string
			At                  *float64
		} `json:"violations"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Outcome != history.OutcomeViolated || back.Exit != history.ExitViolation {
		t.Fatalf("want a violation, got %s", b)
	}
	i := slices.IndexFunc(back.Violations, func(f struct {
		Property, Violation string
		Replicas            []string
		At                  *float64
	}) bool {
		return f.Property == "no-clobber"
	})
	if i < 0 || back.Violations[i].Violation != "clobbered" || !slices.Equal(back.Violations[i].Replicas, []string{"r1", "r2"}) || back.Violations[i].At == nil {
		t.Fatalf("no-clobber (clobbered, r1 then r2, at an instant) not among the violations: %s", b)
	}
	if head, body := v.Told(); head != "Violated" || !strings.Contains(body, "Clobbered at 0.02 s: r1 deleted") {
		t.Fatalf("the verdict's sentence does not say it: %s: %s", head, body)
	}
}

// wokeFor is a herd08 replica's report that its code's watch delivered
// the delete of key at rev.
func wokeFor(at time.Duration, who, key string, rev int64) history.Event {
	return history.Event{At: at, Kind: history.Note, Replica: who, Facts: &history.Facts{Op: history.OpWoken, Key: key, Revision: rev, Succeeded: true}}
}

func enqueued(at time.Duration, who, key string, rev int64) history.Event {
	return history.Event{At: at, Kind: history.Note, Replica: who, Facts: &history.Facts{Op: "enqueue", Key: key, Revision: rev, Succeeded: true}}
}

// herdLine: r1 holds with queue/a, r2 waits with queue/b, r3 with
// queue/c; r1 releases at revision 5.
func herdLine() []history.Event {
	return []history.Event{
		watchPut(0, "queue/a", "", 2, 2), enqueued(0, "r1", "queue/a", 2),
		watchPut(0, "queue/b", "", 3, 3), enqueued(0, "r2", "queue/b", 3),
		watchPut(0, "queue/c", "", 4, 4), enqueued(0, "r3", "queue/c", 4),
		watchDel(time.Second, "queue/a", "", 2, 5),
	}
}

func TestHerdNoHerd(t *testing.T) {
	one := append(herdLine(), wokeFor(time.Second, "r2", "queue/a", 5))
	if ok, s := said(herdNoHerd(&history.Findings{Events: one})); !ok {
		t.Fatalf("only the next in line woke: %s", s)
	}
	all := append(herdLine(), wokeFor(time.Second, "r3", "queue/a", 5), wokeFor(time.Second+time.Millisecond, "r2", "queue/a", 5))
	fd := herdNoHerd(&history.Findings{Events: all})
	ok, s := said(fd)
	if ok || !strings.HasPrefix(s, "herd at 1.00 s") {
		t.Fatalf("every waiter woke: %v %s", ok, s)
	}
	for _, w := range []string{"r1's key queue/a at revision 5", "reached the code of 2 of the 2 other replicas in line through their own watches (r3, r2)", "only r2, directly behind it"} {
		if !strings.Contains(s, w) {
			t.Fatalf("the sentence lacks %q: %s", w, s)
		}
	}
	if !slices.Equal(fd.Replicas, []string{"r3", "r2"}) || len(fd.Events) != 2 {
		t.Fatalf("the finding names r3 first (woken needlessly) and rests on both wake-ups: %+v", fd)
	}
}

// shardDeleted is a shards09 replica's report that its code's request
// deleted keys at rev.
func shardDeleted(at int, who string, rev int64) history.Event {
	return history.Event{At: ms(at), Kind: history.Note, Replica: who,
		Facts: &history.Facts{Op: "deleted", Revision: rev, Deleted: 1, Succeeded: true, Changed: []int64{rev}}}
}

func TestLab09OwnKeysOnly(t *testing.T) {
	shard := lab09Shards + "004"
	// r1 claims shard 4 and gives it back itself; r2 claims it once free.
	fair := []history.Event{
		lockPut(10, shard, "r1", 10, 10, 1),
		shardDeleted(12, "r1", 12), lockDelete(12, shard, "r1", 12, 10),
		lockPut(13, shard, "r2", 13, 13, 1),
	}
	ok, say := judged(t, shardsOwnKeysOnly, 2, fair...)
	wantHeld(t, ok, say)

	// r1's late, unguarded release deletes r2's key.
	late := append(slices.Clone(fair), shardDeleted(14, "r1", 14), lockDelete(14, shard, "r2", 14, 13))
	ok, say = judged(t, shardsOwnKeysOnly, 2, late...)
	wantNamed(t, ok, say, "shard-deleted")
	if !strings.Contains(say, "r1 deleted the key of shard 004") || !strings.Contains(say, "r2's") {
		t.Fatalf("the sentence should name who deleted whose key: %s", say)
	}

	// r3 claims with a plain put over r2's key (same CreateRevision).
	over := append(slices.Clone(fair), lockPut(14, shard, "r3", 14, 13, 2))
	ok, say = judged(t, shardsOwnKeysOnly, 2, over...)
	wantNamed(t, ok, say, "shard-overwritten")
}

// lockedNote is a lock05 replica's note that Acquire returned ErrLocked,
// etcd's last answer at rev (0: none).
func lockedNote(at int, who string, rev int64) history.Event {
	return history.Event{At: ms(at), Kind: history.Note, Replica: who,
		Facts: &history.Facts{Op: lab05OpLocked, Key: lab05Key, Revision: rev, Err: "etcdlock: held by someone else"}}
}

func TestLab05LockedMeansHeld(t *testing.T) {
	held := []history.Event{lockPut(10, lab05Key, "r1", 10, 10, 1), lockedNote(11, "r2", 10)}
	ok, say := judged(t, lab05LockedMeansHeld, 2, held...)
	wantHeld(t, ok, say)

	ok, say = judged(t, lab05LockedMeansHeld, 2, append(slices.Clone(held), lockedNote(12, "r3", 0))...)
	wantNamed(t, ok, say, "locked-unasked")

	// The lock was released at 12; r2's answer at 12 saw it free.
	free := append(slices.Clone(held), lockDelete(12, lab05Key, "r1", 12, 10), lockedNote(13, "r2", 12))
	ok, say = judged(t, lab05LockedMeansHeld, 2, free...)
	wantNamed(t, ok, say, "locked-but-free")
	if !strings.Contains(say, "revision 12") {
		t.Fatalf("the sentence should say at which answer: %s", say)
	}
}

func TestLab08WatchesClosed(t *testing.T) {
	woke := history.Event{At: ms(10), Kind: history.Note, Replica: "r3", Facts: &history.Facts{Op: history.OpWoken, Key: "queue/r2", Revision: 10}}
	ok, say := judged(t, herdWatchesClosed, 2, woke)
	wantHeld(t, ok, say)
	left := history.Event{At: ms(11), Kind: history.Note, Replica: "r3", Facts: &history.Facts{Op: lab08OpLeftOpen, Key: "queue/r2", Succeeded: true}}
	ok, say = judged(t, herdWatchesClosed, 2, woke, left)
	wantNamed(t, ok, say, "watch-left-open")
	if !strings.Contains(say, "r3's code") || !strings.Contains(say, "queue/r2") {
		t.Fatalf("the sentence should name the waiter and the watch left open: %s", say)
	}
}
