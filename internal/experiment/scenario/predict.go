package scenario

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// inPart runs ok on the findings of the named part (false without it).
func inPart(part string, ok func(f *history.Findings) bool) func(h *history.History) bool {
	return func(h *history.History) bool {
		f := history.Find(h, part)
		return f != nil && ok(f)
	}
}

// gapAfterCrash is the first gap a crash began in f, and whether there is one.
func gapAfterCrash(f *history.Findings) (history.Gap, bool) {
	for _, g := range f.Gaps {
		if g.After == history.Crashed {
			return g, true
		}
	}
	return history.Gap{}, false
}

// grantedTTL is the TTL of the part's first grant or acquisition.
func grantedTTL(f *history.Findings) time.Duration {
	for _, e := range f.Events {
		if (e.Kind == history.LeaseGranted || e.Kind == history.Acquired) && e.TTL > 0 {
			return time.Duration(e.TTL) * time.Second
		}
	}
	return time.Second
}

func figureIs(part, name string, ok func(x float64, f *history.Findings) bool) func(h *history.History) bool {
	return inPart(part, func(f *history.Findings) bool {
		x, seen := f.Figure(name)
		return seen && ok(x, f)
	})
}

var singletonQuestion = &experiment.Question{
	Prompt: "Second part: the replicas now hold leased keys, renewed while they live, and the owner crashes. Counting from the crash, when does another replica become owner?",
	Options: []experiment.Option{
		{Text: "Within about one lease TTL, a little over it", Happened: inPart(leasedPart, func(f *history.Findings) bool {
			g, ok := gapAfterCrash(f)
			return ok && g.Length() <= grantedTTL(f)+FailoverSlack && g.Length() >= grantedTTL(f)/2
		})},
		{Text: "Almost at once, well under a TTL", Happened: inPart(leasedPart, func(f *history.Findings) bool {
			g, ok := gapAfterCrash(f)
			return ok && g.Length() < grantedTTL(f)/2
		})},
		{Text: "Only after several TTLs", Happened: inPart(leasedPart, func(f *history.Findings) bool {
			g, ok := gapAfterCrash(f)
			return ok && g.Length() > grantedTTL(f)+FailoverSlack
		})},
		{Text: "Never, as in the first part", Happened: inPart(leasedPart, func(f *history.Findings) bool { _, ok := gapAfterCrash(f); return !ok })},
	},
}

var casQuestion = &experiment.Question{
	Prompt: "Over all the rounds, how do the wins spread over the replicas?",
	Options: []experiment.Option{
		{Text: "Several different replicas win at one time or another", Happened: figureIs("", "distinct_winners", func(x float64, _ *history.Findings) bool { return x >= 2 })},
		{Text: "The same replica wins every round", Happened: figureIs("", "distinct_winners", func(x float64, _ *history.Findings) bool { return x == 1 })},
		{Text: "Some rounds end with no winner at all", Happened: func(h *history.History) bool {
			for _, e := range h.Events {
				if e.Kind == history.Measured && e.Unit == "winners" && e.Value == 0 {
					return true
				}
			}
			return false
		}},
	},
}

var unlockQuestion = &experiment.Question{
	Prompt: "Right after P1's unlock, P3 tries the lock: once after the naive unlock, once after the versioned one. What does etcd answer P3 each time?",
	Options: []experiment.Option{
		{Text: "Naive: the lock is free and P3 takes it; versioned: it is held, by P2", Happened: p3Answers(p3Takes, p3SeesP2)},
		{Text: "Held by P2 both times: neither unlock removes P2's key", Happened: p3Answers(p3SeesP2, p3SeesP2)},
		{Text: "Free both times: P3 takes the lock after either unlock", Happened: p3Answers(p3Takes, p3Takes)},
		{Text: "Naive: it is held, by P2; versioned: the lock is free and P3 takes it", Happened: p3Answers(p3SeesP2, p3Takes)},
	},
	Unjudged: unlockUnjudged,
}

// unlockUnjudged: the question is about what P1's unlock does to the
// lock P2 holds; a part where P2 did not hold it when P1 unlocked (its
// key gone first, after a fault of the learner's or a late renewal), or
// where P1 never unlocked, says nothing about that, so P3's answer there
// judges no pick.
func unlockUnjudged(h *history.History) string {
	for _, part := range []string{naivePart, versionedPart} {
		f := history.Find(h, part)
		if f == nil {
			continue
		}
		unlock, ok := f.LastEvent(history.KindIs(history.Released, "p1"))
		if !ok || unlock.Facts == nil {
			return fmt.Sprintf("in the %s part P1 never unlocked%s", strings.Fields(part)[0], learnerFaultOn(f, "p1", math.MaxInt64))
		}
		p2, ok := f.FirstEvent(history.KindIs(history.Acquired, "p2"))
		if !ok {
			return fmt.Sprintf("in the %s part P2 never held the lock%s", strings.Fields(part)[0], learnerFaultOn(f, "p2", unlock.At))
		}
		if p2KeyGoneBefore(f, p2, unlock) != "" {
			return fmt.Sprintf("in the %s part P2's key was gone before P1 unlocked%s", strings.Fields(part)[0], learnerFaultOn(f, "p2", unlock.At))
		}
	}
	return ""
}

// p3Answer is what etcd answered P3's first try at the lock in a part of
// ttl-unlock-bug.
type p3Answer int

const (
	p3Nothing   p3Answer = iota // P3 got no answer (or never tried)
	p3Takes                     // the create succeeded: P3 holds the lock
	p3SeesP2                    // the create failed on P2's key
	p3SeesOther                 // the create failed on someone else's key
)

func p3AnswerIn(f *history.Findings) p3Answer {
	e, ok := f.FirstEvent(func(e history.Event) bool {
		return e.Replica == "p3" && (e.Kind == history.Acquired || e.Facts != nil && e.Facts.Held != nil)
	})
	switch {
	case !ok:
		return p3Nothing
	case e.Kind == history.Acquired:
		return p3Takes
	case e.Facts.Held.Value == "p2":
		return p3SeesP2
	}
	return p3SeesOther
}

// p3Answers: P3's try was answered naive in the naive part and versioned
// in the versioned part, in each of those parts the run had (a run of
// one variant is judged on that one).
func p3Answers(naive, versioned p3Answer) func(h *history.History) bool {
	return func(h *history.History) bool {
		ran := false
		for part, want := range map[string]p3Answer{naivePart: naive, versionedPart: versioned} {
			f := history.Find(h, part)
			if f == nil {
				continue
			}
			if p3AnswerIn(f) != want {
				return false
			}
			ran = true
		}
		return ran
	}
}

var renewalQuestion = &experiment.Question{
	Prompt: "In the third schedule the replica waits twice its TTL between renewals. What does etcd answer its first renewal?",
	Options: []experiment.Option{
		{Text: "It no longer knows the lease", Happened: inPart(renewalCases[2].part, func(f *history.Findings) bool { n, _, lost := renewals(f); return n == 0 && lost != "" })},
		{Text: "It renews the lease: late renewals still count", Happened: inPart(renewalCases[2].part, func(f *history.Findings) bool { n, _, _ := renewals(f); return n > 0 })},
	},
}

var fencingQuestion = &experiment.Question{
	Prompt: "Once the old owner has woken and acted, whose value does the resource end up holding, with fencing off and with fencing on?",
	Options: []experiment.Option{
		{Text: "Off: the old owner's (its write is taken); on: the new owner's (refused)", Happened: lateWrites(lateTaken, lateRefused)},
		{Text: "The new owner's both times: even with fencing off it is refused", Happened: lateWrites(lateRefused, lateRefused)},
		{Text: "The old owner's both times: its old token does not stop it", Happened: lateWrites(lateTaken, lateTaken)},
		{Text: "The new owner's both times: the old owner stops before it writes", Happened: lateWrites(lateNone, lateNone)},
	},
}

// lateWrite is what became of the old owner's first write with a stale
// token in a fencing part.
type lateWrite int

const (
	lateTaken   lateWrite = iota // the resource took it
	lateRefused                  // the resource refused it
	lateNone                     // it sent none
)

func lateWriteIn(f *history.Findings) lateWrite {
	switch {
	case len(f.Stale) == 0:
		return lateNone
	case f.Stale[0].Accepted:
		return lateTaken
	}
	return lateRefused
}

// lateWrites: the late write came to off in the part without fencing and
// to on in the part with it, in each of those parts the run had (a run of
// one variant is judged on that one).
func lateWrites(off, on lateWrite) func(h *history.History) bool {
	return func(h *history.History) bool {
		ran := false
		for fencing, want := range map[bool]lateWrite{false: off, true: on} {
			f := history.Find(h, fencingPart(fencing))
			if f == nil {
				continue
			}
			if lateWriteIn(f) != want {
				return false
			}
			ran = true
		}
		return ran
	}
}

var failoverQuestion = &experiment.Question{
	Prompt: "Last part: nobody crashes, but the live owner's network stalls three times while its work goes on. How often does ownership move?",
	Options: []experiment.Option{
		{Text: "Never: nobody crashed", Happened: inPart(jitterPart, func(f *history.Findings) bool { ok, _ := falseFailovers(f); return !ok })},
		{Text: "At least once", Happened: inPart(jitterPart, func(f *history.Findings) bool { ok, _ := falseFailovers(f); return ok })},
	},
}

var quorumQuestion = &experiment.Question{
	Prompt: "While only one of the three members runs, what becomes of the elected owner?",
	Options: []experiment.Option{
		{Text: "Its renewals go unanswered and it stops acting as owner", Happened: func(h *history.History) bool { return ownerDuringOutage(h, true) }},
		{Text: "It renews through the member still running and stays owner", Happened: func(h *history.History) bool { return ownerDuringOutage(h, false) }},
	},
}

// ownerDuringOutage: between the second member stopped and the first
// restarted, whether the owner stepped down (lost) or was still renewed.
func ownerDuringOutage(h *history.History, lost bool) bool {
	stops := 0
	for _, e := range h.Events {
		switch {
		case e.Kind == history.MemberStopped:
			stops++
		case stops < 2:
		case e.Kind == history.MemberRestarted:
			return false
		case lost && (e.Kind == history.SteppedDown || e.Kind == history.LeaseExpired || e.Kind == history.Lost):
			return true
		case !lost && e.Kind == history.LeaseRenewed:
			return true
		}
	}
	return false
}

var leaderChangeQuestion = &experiment.Question{
	Prompt: "The lease had about a second left when the leader moved. Counting from the move, when does etcd delete the crashed client's key?",
	Options: []experiment.Option{
		{Text: "About one second later, as it would have without the move", Happened: keyGoneAfterMove(0, 2*time.Second)},
		{Text: "About a full TTL later", Happened: keyGoneAfterMove(3*time.Second, time.Hour)},
		{Text: "At once", Happened: keyGoneAfterMove(0, 300*time.Millisecond)},
	},
}

func keyGoneAfterMove(lo, hi time.Duration) func(h *history.History) bool {
	return func(h *history.History) bool {
		f := history.Find(h, "")
		move, ok := f.FirstEvent(history.KindIs(history.LeaderMoved, ""))
		del, gone := f.FirstEvent(func(e history.Event) bool {
			return e.Kind == history.KeyChanged && e.Facts.Op == "delete" && e.Facts.Key == "owner"
		})
		return ok && gone && del.At-move.At >= lo && del.At-move.At < hi
	}
}

var herdQuestion = &experiment.Question{
	Prompt: "First way: every waiter watches the lock key itself. On each release, how many requests do the waiters send etcd?",
	Options: []experiment.Option{
		{Text: "About one per waiter", Happened: figureIs("", "naive_requests_per_release", func(x float64, f *history.Findings) bool { return x >= float64(f.Params.Replicas-1-herdReleases) })},
		{Text: "One or two: only the next in line asks", Happened: figureIs("", "naive_requests_per_release", func(x float64, _ *history.Findings) bool { return x <= 2 })},
	},
}

var shardQuestion = &experiment.Question{
	Prompt: "The crashed worker's lease is orphaned, not revoked. When do its shards get new owners?",
	Options: []experiment.Option{
		{Text: "About one TTL after the crash", Happened: inPart("", func(f *history.Findings) bool {
			x, ok := f.Figure("move_s")
			ttl := grantedTTL(f).Seconds()
			return ok && x >= ttl/2 && x <= ttl+1.5
		})},
		{Text: "Within a moment of the crash", Happened: figureIs("", "move_s", func(x float64, _ *history.Findings) bool { return x < 0.3 })},
		{Text: "Not until the worker comes back", Happened: figureIs("", "moved", func(x float64, _ *history.Findings) bool { return x == 0 })},
	},
}

var leastPrivilegeQuestion = &experiment.Question{
	Prompt: "After its delete, worker-7 only reads migrations/leader (a get). What does etcd answer it?",
	Options: []experiment.Option{
		{Text: "Permission denied: reading is outside its role too", Happened: workerGet(false)},
		{Text: "The key's value: reading is allowed to anyone logged in", Happened: workerGet(true)},
	},
}

func workerGet(ok bool) func(h *history.History) bool {
	return func(h *history.History) bool {
		for _, e := range h.Events {
			if e.Replica == "worker-7" && e.Facts != nil && e.Facts.Op == "get" {
				return e.Facts.Succeeded == ok && (ok || strings.Contains(e.Facts.Err, "permission denied"))
			}
		}
		return false
	}
}
