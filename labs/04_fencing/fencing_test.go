package fencing

// Grader for lab 5.1. Each TestStepK checks one step of README.md.
//
// Wrong solutions these tests defend against (each fails at least one test;
// [mutant] ones are kept in solutions/04_fencing/testdata/mutants and
// checked by `go run ./internal/tools/labcheck`):
//   - <= instead of <, which rejects a leader's second write with the same
//     token [mutant rejects_equal_token.patch]: Step 2.
//   - remembering the last token seen instead of the highest accepted, so
//     a rejected stale write lowers the bar [mutant
//     remembers_last_token.patch]: Step 1.
//   - one highest token for the whole storage instead of one per resource
//     [mutant global_token.patch]: Step 3.
//   - a compare and a write under two lock sections: Step 4, behind slow
//     readers (the writers then get the lock in turn, into the gap).
//   - no lock around the compare and the write [mutant unlocked_write.patch]:
//     Step 4 under -race.
//   - a worker that checks the owner but not the version, so a request
//     delayed across an ownership flip-flop (A, then B, then A again) is
//     applied [mutant owner_only_check.patch]: Step 6.
//   - a worker that remembers who the owner was instead of asking the lock
//     store for every request, and so trusts an owner whose lock has
//     expired: Step 5.
//   - a stale write let through because it carries the value the
//     resource already holds: Step 1.
//   - token 0 (what a leader that never got a token sends) accepted on a
//     fresh resource: Step 1.
//   - a write of the empty value taken for "clear the resource": it
//     deletes the entry with its token, or resets the bar, or is answered
//     nil without being stored, or Read then reports token 0: Step 1
//     (the bar holds for every value, "" included).
//   - a worker that compares the fields of the entry it read without
//     looking whether the key exists, so a request with no owner and
//     version 0 passes for an absent lock: Step 5.
//   - Read, or the worker's bookkeeping, without the mutex while other
//     goroutines write: Steps 4 and 5 under -race.
//
// More learner mistakes are in solutions/04_fencing/testdata/bugs; labcheck
// requires each to fail a step.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownership-election/playground/labs/kv"
)

func TestStep1_RejectsLowerToken(t *testing.T) {
	s := NewStorage()
	steps := []struct {
		token int64
		value string
		stale bool
	}{
		{7, "leader-a-started", false},
		{8, "leader-b-committed", false},
		{7, "leader-a-resumed", true}, // leader A woke up from a pause
	}
	for _, st := range steps {
		err := s.Write("report.csv", st.token, st.value)
		switch {
		case st.stale && !errors.Is(err, ErrStaleToken):
			t.Fatalf("Write(token %d) after token 8 was accepted = %v, want ErrStaleToken: token 7 belongs to a leader that has been replaced", st.token, err)
		case !st.stale && err != nil:
			t.Fatalf("Write(token %d, %q) = %v, want nil", st.token, st.value, err)
		}
	}
	if v, tok := s.Read("report.csv"); v != "leader-b-committed" || tok != 8 {
		t.Fatalf("after writes with tokens 7, 8 and a stale 7, Read = (%q, %d), want (%q, 8): the stale write must change nothing", v, tok, "leader-b-committed")
	}
	// A stale write is refused even when it carries the value the
	// resource holds already: the caller must hear that it is no longer
	// the owner, whatever it wrote.
	if err := s.Write("report.csv", 7, "leader-b-committed"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write(token 7, %q) after token 8 wrote that same value = %v, want ErrStaleToken: the token decides, not the value; a leader told nil here goes on believing it owns the resource", "leader-b-committed", err)
	}
	// The bar is the highest token accepted, not the last one seen.
	if err := s.Write("report.csv", 5, "older still"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write(token 5) after 8 = %v, want ErrStaleToken: 5 is lower than the highest token accepted", err)
	}
	if err := s.Write("report.csv", 6, "a rejected write lowered the bar"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write(token 6) after 8 (and a rejected 5) = %v, want ErrStaleToken: compare with the highest token accepted", err)
	}
	if err := s.Write("report.csv", 9, "leader-c"); err != nil {
		t.Fatalf("Write(token 9) = %v, want nil: a newer leader must get through", err)
	}
	if v, tok := s.Read("report.csv"); v != "leader-c" || tok != 9 {
		t.Fatalf("after leader-c wrote with token 9, Read = (%q, %d), want (%q, 9): an accepted write stores its value and raises the highest token", v, tok, "leader-c")
	}
	// Token 0 is what a caller sends when it never took the lock (the
	// zero value of an int64): no lock hands it out, so it is never valid,
	// not even on a resource nobody has written yet.
	fresh := NewStorage()
	if err := fresh.Write("audit.log", 0, "from a leader without a lock"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write(token 0) on a resource never written = %v, want ErrStaleToken: lock versions start at 1, so token 0 means the writer never held the lock", err)
	}
	if err := fresh.Write("audit.log", -3, "negative"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write(token -3) = %v, want ErrStaleToken: a token is never negative", err)
	}
	if v, tok := fresh.Read("audit.log"); v != "" || tok != 0 {
		t.Fatalf("after refused writes with tokens 0 and -3, Read = (%q, %d), want (\"\", 0): a refused write changes nothing", v, tok)
	}
	if err := fresh.Write("audit.log", 1, "first leader"); err != nil {
		t.Fatalf("Write(token 1) on a fresh resource = %v, want nil: 1 is the first token a lock hands out", err)
	}
	emptyValueKeepsTheBar(t)
}

// emptyValueKeepsTheBar checks that the empty value is a value like any
// other: writing it is a write (it raises the bar and Read shows it), and
// it clears nothing, so the tokens below the bar stay refused.
func emptyValueKeepsTheBar(t *testing.T) {
	t.Helper()
	s := NewStorage()
	if err := s.Write("cache/entry", 4, "warm"); err != nil {
		t.Fatalf("Write(cache/entry, token 4) on a fresh storage = %v, want nil", err)
	}
	if err := s.Write("cache/entry", 9, ""); err != nil {
		t.Fatalf("Write(cache/entry, token 9, \"\") = %v, want nil: the empty value is a value like any other, and 9 is the highest token yet", err)
	}
	if v, tok := s.Read("cache/entry"); v != "" || tok != 9 {
		t.Fatalf("after a write of \"\" with token 9, Read = (%q, %d), want (\"\", 9): an accepted write stores its value, empty or not, and raises the highest token", v, tok)
	}
	for _, w := range []struct {
		token int64
		value string
	}{{4, "from the leader of token 4"}, {8, ""}, {1, "stale"}} {
		if err := s.Write("cache/entry", w.token, w.value); !errors.Is(err, ErrStaleToken) {
			t.Fatalf("Write(cache/entry, token %d, %q) after token 9 wrote \"\" = %v, want ErrStaleToken: writing the empty value does not clear the resource's bar; any token below 9 is stale", w.token, w.value, err)
		}
	}
	if v, tok := s.Read("cache/entry"); v != "" || tok != 9 {
		t.Fatalf("after stale writes with tokens 4, 8 and 1, Read = (%q, %d), want (\"\", 9): a refused write changes nothing", v, tok)
	}
	if err := s.Write("cache/entry", 9, "refilled"); err != nil {
		t.Fatalf("Write(cache/entry, token 9) after token 9 wrote \"\" = %v, want nil: an equal token is the same leader writing again", err)
	}
	if err := s.Write("cache/entry", 0, ""); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write(cache/entry, token 0, \"\") = %v, want ErrStaleToken: token 0 is never valid, whatever the value", err)
	}
	if v, tok := s.Read("cache/entry"); v != "refilled" || tok != 9 {
		t.Fatalf("after a refused write of \"\" with token 0, Read = (%q, %d), want (%q, 9): a refused write changes nothing", v, tok, "refilled")
	}
}

func TestStep2_AcceptsEqualToken(t *testing.T) {
	s := NewStorage()
	for i := range 3 {
		v := fmt.Sprintf("batch %d", i+1)
		if err := s.Write("invoices", 34, v); err != nil {
			t.Fatalf("write %d of the leader holding token 34 = %v, want nil: a leader writes many times with the same token", i+1, err)
		}
		if got, tok := s.Read("invoices"); got != v || tok != 34 {
			t.Fatalf("after write %d with token 34, Read = (%q, %d), want (%q, 34)", i+1, got, tok, v)
		}
	}
}

func TestStep3_TokensPerResource(t *testing.T) {
	s := NewStorage()
	if err := s.Write("objects/x", 42, "from the x leader"); err != nil {
		t.Fatalf("Write(objects/x, token 42) on a fresh storage = %v, want nil", err)
	}
	// Another resource has its own lock and its own, smaller, tokens.
	if err := s.Write("offsets/shard-7", 3, "offset 1200"); err != nil {
		t.Fatalf("Write(offsets/shard-7, token 3) after objects/x saw 42 = %v, want nil: each resource keeps its own highest token", err)
	}
	if err := s.Write("offsets/shard-7", 2, "offset 900"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write(offsets/shard-7, token 2) after 3 = %v, want ErrStaleToken: within one resource a lower token is still stale", err)
	}
	if v, tok := s.Read("objects/x"); v != "from the x leader" || tok != 42 {
		t.Fatalf("Read(objects/x) = (%q, %d), want (%q, 42): writes to offsets/shard-7 must not touch objects/x", v, tok, "from the x leader")
	}
	if v, tok := s.Read("offsets/shard-7"); v != "offset 1200" || tok != 3 {
		t.Fatalf("Read(offsets/shard-7) = (%q, %d), want (%q, 3)", v, tok, "offset 1200")
	}
	if v, tok := s.Read("never/written"); v != "" || tok != 0 {
		t.Fatalf("Read of a resource never written = (%q, %d), want (\"\", 0)", v, tok)
	}
}

func TestStep4_GCPauseScenario(t *testing.T) {
	t.Run("a paused leader's write is rejected", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			locks, storage := kv.New(), NewStorage()
			const lock, object = "locks/object-x", "object-x"
			// A takes the lock: the version of its lock write is its token.
			tokenA, ok, _ := locks.CompareAndSwap(lock, "", "leader-a", 10*time.Second)
			if !ok {
				t.Fatal("setup: leader-a could not lock")
			}
			if err := storage.Write(object, tokenA, "A: part 1"); err != nil {
				t.Fatalf("leader-a's first write = %v, want nil", err)
			}
			resultA := make(chan error)
			go func() {
				time.Sleep(14 * time.Second) // stop-the-world pause; the lease runs out at 10 s
				resultA <- storage.Write(object, tokenA, "A: part 2")
			}()
			time.Sleep(10 * time.Second)
			tokenB, ok, _ := locks.CompareAndSwap(lock, "", "leader-b", 10*time.Second)
			if !ok {
				t.Fatal("setup: leader-b could not take the expired lock")
			}
			if err := storage.Write(object, tokenB, "B: everything"); err != nil {
				t.Fatalf("leader-b's write with token %d (the newest lock) = %v, want nil: a higher token than any seen must get through", tokenB, err)
			}
			if err := <-resultA; !errors.Is(err, ErrStaleToken) {
				t.Fatalf("leader-a's write after its pause (token %d, storage saw %d) = %v, want ErrStaleToken: leader-a's lock expired during the pause, and this write would overwrite leader-b's", tokenA, tokenB, err)
			}
			if v, tok := storage.Read(object); v != "B: everything" || tok != tokenB {
				t.Fatalf("after the paused leader's write was refused, Read = (%q, %d), want (%q, %d): leader-b's write must stand", v, tok, "B: everything", tokenB)
			}
		})
	})
	t.Run("concurrent writers", func(t *testing.T) {
		for range 20 {
			s := NewStorage()
			tokens := rand.Perm(50)
			var wg sync.WaitGroup
			for _, tok := range tokens {
				wg.Go(func() { s.Write("r", int64(tok+1), fmt.Sprint("w", tok+1)) })
			}
			// A reader at the same time: Read needs the mutex too (go test
			// -race reports a Read that looks at the map without it). One
			// read is enough for the race detector.
			wg.Go(func() {
				if v, tok := s.Read("r"); tok != 0 && v != fmt.Sprint("w", tok) {
					t.Errorf("a concurrent Read returned (%q, %d): a value and a token from two different writes. Read must see one write whole", v, tok)
				}
			})
			wg.Wait()
			if v, tok := s.Read("r"); v != "w50" || tok != 50 {
				t.Fatalf("after 50 concurrent writes with tokens 1..50, Read = (%q, %d), want (w50, 50): whatever order they arrive in, only the highest token may win. Hold s.mu from the comparison to the write", v, tok)
			}
		}
	})
	t.Run("concurrent writers behind slow readers", func(t *testing.T) {
		// Two readers keep the storage busy with lookups of a 4 MiB
		// resource name, so the writers queue for its lock for over a
		// millisecond. Go's mutex then turns fair and hands the lock to
		// the next writer in line at every unlock: a Write that unlocks
		// between its comparison and its store lets the next writer
		// compare against a bar that is about to move.
		huge := strings.Repeat("r", 4<<20)
		for range 12 { // each round shows the gap more often than not; twelve make a miss rare (labcheck grades that bug 5 times)
			s := NewStorage()
			for i := range 16 { // enough resources that a lookup hashes its name
				s.Write(fmt.Sprint("other-", i), 1, "x")
			}
			var (
				readers sync.WaitGroup
				started sync.WaitGroup
				done    atomic.Bool
			)
			for range 2 {
				started.Add(1)
				readers.Go(func() {
					s.Read(huge)
					started.Done()
					for !done.Load() {
						s.Read(huge)
					}
				})
			}
			started.Wait()
			var wg sync.WaitGroup
			for _, tok := range rand.Perm(50) {
				wg.Go(func() { s.Write("r", int64(tok+1), fmt.Sprint("w", tok+1)) })
			}
			wg.Wait()
			done.Store(true)
			readers.Wait()
			if v, tok := s.Read("r"); v != "w50" || tok != 50 {
				t.Fatalf("after 50 concurrent writes with tokens 1..50 (while other clients kept the storage busy), Read = (%q, %d), want (w50, 50): a lower token was stored after a higher one. Hold s.mu from the comparison to the write, without unlocking in between", v, tok)
			}
		}
	})
}

func TestStep5_WorkerChecksOwnerAndVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		locks := kv.New()
		w := NewWorker(locks)
		v, _, _ := locks.CompareAndSwap("shards/1", "", "leader-a", 10*time.Second)
		cases := []struct {
			req  Request
			want error
			why  string
		}{
			{Request{"shards/1", "leader-a", v, "a1"}, nil, "the owner at the current version"},
			{Request{"shards/1", "leader-b", v, "b1"}, ErrNotOwner, "leader-b does not own shards/1"},
			{Request{"shards/1", "leader-a", v + 1, "a2"}, ErrNotOwner, "the version does not match the lock"},
			{Request{"shards/2", "leader-a", v, "a3"}, ErrNotOwner, "nobody holds shards/2"},
			{Request{"shards/3", "", 0, "z"}, ErrNotOwner, "nobody holds shards/3; an absent key reads as owner \"\" at version 0, so check that it exists before comparing"},
			{Request{"shards/1", "leader-a", v, "a4"}, nil, "the owner again"},
		}
		for _, c := range cases {
			err := w.Handle(c.req)
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("Handle(%+v) = %v, want nil: %s", c.req, err, c.why)
			case c.want != nil && err == nil:
				t.Fatalf("Handle(%+v) = nil, want ErrNotOwner: %s", c.req, c.why)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("Handle(%+v) = %q, which does not wrap ErrNotOwner: %s. Return ErrNotOwner (wrapped with %%w is fine) so callers can tell a refused request from a failure", c.req, err, c.why)
			}
		}
		time.Sleep(10 * time.Second) // leader-a's lock expires
		if err := w.Handle(Request{"shards/1", "leader-a", v, "a5"}); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Handle from leader-a after its lock expired = %v, want ErrNotOwner: ask the lock store on every request, do not remember an earlier answer", err)
		}
		if got, want := w.Applied(), []string{"a1", "a4"}; !slices.Equal(got, want) {
			t.Fatalf("Applied = %q, want %q: only the owner's requests are applied, once each, in order", got, want)
		}
		// Requests arrive concurrently in a real worker; go test -race
		// reports shared state touched without w.mu.
		v2, _, _ := locks.CompareAndSwap("shards/1", "", "leader-b", time.Minute)
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() { w.Handle(Request{"shards/1", "leader-b", v2, fmt.Sprint("b", i)}) })
			wg.Go(func() { w.Handle(Request{"shards/1", "leader-a", v, fmt.Sprint("stale", i)}) })
		}
		wg.Wait()
		if got := w.Applied(); len(got) != 12 {
			t.Fatalf("after 10 concurrent requests from the owner and 10 from a former owner, %d payloads are applied in total, want 12 (the 2 from before and the owner's 10)", len(got))
		}
	})
}

func TestStep6_FlipFlopDelayedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		locks := kv.New()
		w := NewWorker(locks)
		const shard = "shards/1"
		// shard 1 goes A -> B -> A while A's first request is in flight.
		v1, _, _ := locks.CompareAndSwap(shard, "", "replica-a", 10*time.Second)
		delayed := Request{shard, "replica-a", v1, "set offset 100 (sent during A's first term)"}
		time.Sleep(10 * time.Second)
		v2, _, _ := locks.CompareAndSwap(shard, "", "replica-b", 10*time.Second)
		if err := w.Handle(Request{shard, "replica-b", v2, "set offset 250"}); err != nil {
			t.Fatalf("replica-b's request as the current owner at the current version = %v, want nil", err)
		}
		time.Sleep(10 * time.Second)
		v3, _, _ := locks.CompareAndSwap(shard, "", "replica-a", 10*time.Second)
		if err := w.Handle(delayed); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("the request replica-a sent in its first term (version %d), arriving in its second term (version %d) = %v, want ErrNotOwner: the owner matches but the version does not", v1, v3, err)
		}
		if err := w.Handle(Request{shard, "replica-a", v3, "set offset 300"}); err != nil {
			t.Fatalf("replica-a's request in its second term, with that term's version = %v, want nil: the current owner at the current version", err)
		}
		if got, want := w.Applied(), []string{"set offset 250", "set offset 300"}; !slices.Equal(got, want) {
			t.Fatalf("Applied = %q, want %q: only the two requests from the owner of the moment", got, want)
		}
	})
}
