package cas

// Grader for lab 2.1. Each TestStepK checks one step of README.md.
//
// Wrong solutions these tests defend against (each fails at least one test;
// the ones marked [mutant] are kept in solutions/01_cas/testdata/mutants and
// checked by `go run ./internal/tools/labcheck`):
//   - create that overwrites an existing key because expected == "" is
//     treated as "anything" [mutant create_overwrites.patch]: Step 1.
//   - absent key with an expected value failing silently (no
//     ErrKeyNotFound) or, worse, creating the key [mutant
//     missing_key_no_error.patch]: Step 2.
//   - a failed compare-and-swap that still writes, or bumps the version:
//     Steps 2 and 3; one that returns the key's version instead of 0:
//     Steps 1 and 2; one that moves the key's deadline: Step 4.
//   - a swap expecting the old value of an expired key that nothing has
//     read since (expiry checked only on create, or only by Get's
//     eviction): Step 4.
//   - a key holding "" taken for absent: Step 2.
//   - expected == "" read as "create only", so a key that holds "" is
//     never overwritten (the table's third row): Step 2.
//   - a version counted per key, which starts again at 1 after the key
//     expires, so an old holder's version matches again [mutant
//     per_key_version.patch]: Step 3.
//   - expiry checked with "after the deadline" instead of "not before it",
//     so the key survives the exact instant its TTL ends [mutant
//     expiry_off_by_one.patch]: Step 4.
//   - ttl == 0 treated as "already expired": Step 4.
//   - expiry checked in Get but not in CompareAndSwap, or the other way
//     round: Step 4.
//   - a swap that keeps the old deadline (the TTL counted from the first
//     write), or keeps it when the new write has ttl == 0: Step 4.
//   - a write skipped when the new value equals the old one, the clock
//     used as a version, or a first version of 0: Steps 1 and 3.
//   - a sync.RWMutex whose Get drops an expired key while holding only
//     the read lock: Step 5, where eight readers meet on expired keys
//     (the runtime's map check stops that run even without -race).
//   - no mutex, or a check and a write under two separate lock sections
//     [mutant unlocked_check.patch], or a Get that reads without the mutex:
//     Step 5 (two winners, or the race detector when run with -race). The
//     split lock shows reliably in the rounds behind a slow client: the
//     replicas wait over a millisecond for the lock, which puts Go's mutex
//     in its fair mode, where each unlock hands the lock to the next in
//     line, straight into the gap between check and write.
//
// The learner bugs in solutions/01_cas/testdata/bugs/*.patch are more
// such mistakes; labcheck requires each to fail at least one step.

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// advance moves the fake clock on by d, then lets every goroutine started
// by the code under test (expiry timers, if you use time.AfterFunc) run
// before the test looks.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func TestStep1_CreateWhenAbsent(t *testing.T) {
	s := NewStore()
	if v, ver, ok := s.Get("leader"); ok {
		t.Fatalf(`Get("leader") on an empty store = (%q, %d, true), want ("", 0, false): nothing was ever written`, v, ver)
	}
	v, ok, err := s.CompareAndSwap("leader", "", "replica-1", 0)
	if err != nil || !ok {
		t.Fatalf(`CompareAndSwap("leader", "", "replica-1") on an absent key = (%d, %v, %v), want a version, true, nil`, v, ok, err)
	}
	if v <= 0 {
		t.Errorf("the first write got version %d, want a positive version: later labs use 0 to mean \"no write\", so a real write must never get it", v)
	}
	got, gotV, found := s.Get("leader")
	if !found || got != "replica-1" || gotV != v {
		t.Fatalf(`after a successful create Get("leader") = (%q, %d, %v), want ("replica-1", %d, true): Get must return what the write stored and the version it returned`, got, gotV, found, v)
	}
	// Expected "" means "only if absent", not "whatever is there".
	lost, ok, err := s.CompareAndSwap("leader", "", "replica-2", 0)
	if ok || err != nil {
		t.Fatalf(`CompareAndSwap("leader", "", "replica-2") while replica-1 holds the key = (swapped=%v, err=%v), want (false, nil): an empty expected value means "only if absent", so a second replica must not take a held key`, ok, err)
	}
	if lost != 0 {
		t.Fatalf(`CompareAndSwap("leader", "", "replica-2") while replica-1 holds the key returned version %d, want 0: a swap that did not write returns version 0 (the README's table), not the version of the key it found`, lost)
	}
	if got, _, _ := s.Get("leader"); got != "replica-1" {
		t.Fatalf("after a losing create the key holds %q, want %q (the first writer keeps it)", got, "replica-1")
	}
}

func TestStep2_SwapOnlyWhenEqual(t *testing.T) {
	s := NewStore()
	t.Run("absent key with an expected value is an error", func(t *testing.T) {
		v, ok, err := s.CompareAndSwap("lock", "0", "1", 0)
		if v != 0 || ok || !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf(`CompareAndSwap("lock", "0", "1") on an absent key = (%d, %v, %v), want (0, false, ErrKeyNotFound)`, v, ok, err)
		}
		if _, _, found := s.Get("lock"); found {
			t.Fatal(`CompareAndSwap("lock", "0", "1") on an absent key created it anyway; a swap that expected a value must change nothing when the key is missing`)
		}
	})
	t.Run("equal value swaps", func(t *testing.T) {
		v1, _, _ := s.CompareAndSwap("lock", "", "0", 0)
		v2, ok, err := s.CompareAndSwap("lock", "0", "1", 0)
		if !ok || err != nil {
			t.Fatalf(`CompareAndSwap("lock", "0", "1") while it holds "0" = (swapped=%v, err=%v), want (true, nil)`, ok, err)
		}
		if got, gotV, _ := s.Get("lock"); got != "1" || gotV != v2 {
			t.Fatalf(`after a successful swap Get = (%q, %d), want ("1", %d): the new value and the version the swap returned`, got, gotV, v2)
		}
		if v2 <= v1 {
			t.Fatalf("the swap got version %d, not larger than the previous write's %d: every write needs a new, larger version", v2, v1)
		}
	})
	t.Run("different value fails and changes nothing", func(t *testing.T) {
		_, before, _ := s.Get("lock")
		v, ok, err := s.CompareAndSwap("lock", "0", "1", 0)
		if ok || err != nil {
			t.Fatalf(`CompareAndSwap("lock", "0", "1") while it holds "1" = (swapped=%v, err=%v), want (false, nil)`, ok, err)
		}
		if v != 0 {
			t.Fatalf(`CompareAndSwap("lock", "0", "1") while it holds "1" failed but returned version %d, want 0: a failed swap returns (0, false, nil), whatever version the key has (%d); a caller must not mistake it for the version of a write`, v, before)
		}
		if got, after, _ := s.Get("lock"); got != "1" || after != before {
			t.Fatalf("a failed swap changed the key to (%q, version %d), want it untouched (\"1\", %d): a compare that fails must not write", got, after, before)
		}
	})
	t.Run("an empty value is a value", func(t *testing.T) {
		s := NewStore()
		v, ok, err := s.CompareAndSwap("flag", "", "", 0)
		if !ok || err != nil || v <= 0 {
			t.Fatalf(`CompareAndSwap("flag", "", "") on an absent key = (%d, %v, %v), want (a version, true, nil): writing "" is a write like any other`, v, ok, err)
		}
		if got, gotV, found := s.Get("flag"); !found || got != "" || gotV != v {
			t.Fatalf(`after writing "" Get("flag") = (%q, %d, %v), want ("", %d, true): a key that holds "" is present`, got, gotV, found, v)
		}
		if _, ok, err := s.CompareAndSwap("flag", "x", "y", 0); ok || err != nil {
			t.Fatalf(`CompareAndSwap("flag", "x", "y") while the key holds "" = (swapped=%v, err=%v), want (false, nil): the key is present and holds something else than "x", so this is a failed swap, not ErrKeyNotFound`, ok, err)
		}
		// The key is present and holds "", which is what "" expects: the
		// third row of the table, an overwrite (not a refused create).
		v2, ok, err := s.CompareAndSwap("flag", "", "set", 0)
		if !ok || err != nil || v2 <= v {
			t.Fatalf(`CompareAndSwap("flag", "", "set") while the key holds "" = (%d, %v, %v), want (a new, larger version, true, nil): the key holds exactly the expected value "", so the swap overwrites it`, v2, ok, err)
		}
		if got, gotV, found := s.Get("flag"); !found || got != "set" || gotV != v2 {
			t.Fatalf(`after the swap from "" to "set" Get("flag") = (%q, %d, %v), want ("set", %d, true)`, got, gotV, found, v2)
		}
	})
}

func TestStep3_VersionIncreasesOnEveryWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore()
		var last int64
		const (
			absent = "the key is absent, so a create succeeds"
			holds  = "the key holds the expected value"
		)
		write := func(key, expected, next string, ttl time.Duration, why string) {
			t.Helper()
			v, ok, err := s.CompareAndSwap(key, expected, next, ttl)
			if !ok || err != nil {
				t.Fatalf("CompareAndSwap(%q, %q, %q) = (%d, %v, %v), want a new version, true, nil: %s", key, expected, next, v, ok, err, why)
			}
			if v <= last {
				t.Fatalf("write of %q to %q got version %d, want more than the last version handed out (%d)", next, key, v, last)
			}
			last = v
		}
		write("a", "", "x", 0, absent)
		write("a", "x", "y", 0, holds)
		write("b", "", "x", 0, absent+"; the version still grows across keys")
		write("a", "y", "y", 0, "writing the value the key already holds is still a write, and gets a new version")
		_, before, _ := s.Get("a")
		s.CompareAndSwap("a", "nope", "z", 0)
		if _, v, _ := s.Get("a"); v != before {
			t.Fatalf("a failed swap (expected %q, the key holds %q) moved the version of %q from %d to %d; a failed swap must not write", "nope", "y", "a", before, v)
		}
		// A key that expires and is created again must not reuse an old
		// version: a holder from before the expiry would match again.
		write("lease", "", "replica-1", 5*time.Second, absent)
		old := last
		advance(5 * time.Second)
		write("lease", "", "replica-1", 5*time.Second, "the key was written with a 5 s TTL 5 s ago, so it has expired and counts as absent (step 4)")
		if last <= old {
			t.Fatalf("the key re-created after it expired got version %d, want more than %d (its version before the expiry): otherwise the old holder's version would match the new key", last, old)
		}
		// Ten create-expire cycles on one key: ten distinct versions.
		fresh := NewStore()
		seen := map[int64]bool{}
		for i := range 10 {
			v, ok, err := fresh.CompareAndSwap("k", "", "v", time.Second)
			if !ok || err != nil {
				t.Fatalf("create number %d of a key whose 1 s TTL had run out = (%d, %v, %v), want (a new version, true, nil): an expired key counts as absent (step 4)", i+1, v, ok, err)
			}
			if seen[v] {
				t.Fatalf("create number %d of a key that had expired got version %d again; versions must never repeat, or a holder from before the expiry would match the new key", i+1, v)
			}
			seen[v] = true
			advance(time.Second)
		}
	})
}

func TestStep4_ExpiryMakesKeyAbsent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore()
		s.CompareAndSwap("lock", "", "replica-1", 10*time.Second)
		s.CompareAndSwap("forever", "", "x", 0)
		advance(10*time.Second - time.Millisecond)
		if got, _, ok := s.Get("lock"); !ok || got != "replica-1" {
			t.Fatalf(`1 ms before its 10 s TTL ends Get("lock") = (%q, %v), want ("replica-1", true): a key lives until its deadline`, got, ok)
		}
		advance(time.Millisecond)
		if got, ver, ok := s.Get("lock"); ok || got != "" || ver != 0 {
			t.Fatalf(`exactly 10 s after a write with a 10 s TTL, Get = (%q, %d, %v), want ("", 0, false): the key has expired and must be absent from that instant`, got, ver, ok)
		}
		// An expired key behaves like an absent one for CompareAndSwap too.
		if _, ok, err := s.CompareAndSwap("lock", "replica-1", "replica-1", 10*time.Second); ok || !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf("the key expired at 10 s; a swap expecting its old value %q = (swapped=%v, err=%v), want (false, ErrKeyNotFound): an expired key is absent for CompareAndSwap too, not only for Get", "replica-1", ok, err)
		}
		if _, ok, err := s.CompareAndSwap("lock", "", "replica-2", 10*time.Second); !ok || err != nil {
			t.Fatalf("the key expired at 10 s; a create (expected \"\") = (swapped=%v, err=%v), want (true, nil): an expired key is absent for CompareAndSwap too, so a new holder can take it", ok, err)
		}
		// A swap refreshes the TTL from the moment of the swap.
		// (A failed swap, below, changes nothing: not the deadline either.)
		advance(6 * time.Second)
		s.CompareAndSwap("lock", "replica-2", "replica-2", 10*time.Second)
		advance(6 * time.Second)
		if _, _, ok := s.Get("lock"); !ok {
			t.Fatal("a key created 12 s ago with a 10 s TTL and rewritten 6 s ago with a 10 s TTL has expired; the TTL counts from the latest write, not the first")
		}
		// A rewrite with ttl == 0 removes the deadline the previous write set.
		s.CompareAndSwap("lock", "replica-2", "replica-3", 0)
		advance(time.Hour)
		if got, _, ok := s.Get("lock"); !ok || got != "replica-3" {
			t.Fatalf("a key with a 10 s TTL was rewritten with ttl == 0; an hour later Get = (%q, %v), want (\"replica-3\", true): each write sets the expiry afresh, and ttl 0 means none", got, ok)
		}
		advance(1000 * time.Hour)
		if _, _, ok := s.Get("forever"); !ok {
			t.Fatal("a key written with ttl == 0 expired; ttl 0 means it never expires")
		}
		// The shortest TTL there is: one nanosecond.
		s.CompareAndSwap("blink", "", "x", time.Nanosecond)
		if _, _, ok := s.Get("blink"); !ok {
			t.Fatal("a key written with a 1 ns TTL is absent at the instant of the write; it lives until the deadline")
		}
		advance(time.Nanosecond)
		if got, _, ok := s.Get("blink"); ok {
			t.Fatalf("1 ns after a write with a 1 ns TTL the key still holds %q; it has expired", got)
		}
	})
	t.Run("a swap on an expired key that nothing has read since", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewStore()
			s.CompareAndSwap("lock", "", "replica-1", 10*time.Second)
			advance(10 * time.Second)
			// No Get in between: whatever cleans up expired keys has not
			// run, and CompareAndSwap alone must see the deadline.
			if v, ok, err := s.CompareAndSwap("lock", "replica-1", "replica-1", 10*time.Second); v != 0 || ok || !errors.Is(err, ErrKeyNotFound) {
				t.Fatalf("the key expired at 10 s and nothing read it since; a swap expecting its old value %q = (%d, %v, %v), want (0, false, ErrKeyNotFound): CompareAndSwap must check the deadline itself, in every case, not only when creating", "replica-1", v, ok, err)
			}
			if _, _, ok := s.Get("lock"); ok {
				t.Fatal("a swap on the expired key brought it back: a swap that fails with ErrKeyNotFound writes nothing")
			}
		})
	})
	t.Run("a failed swap keeps the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewStore()
			s.CompareAndSwap("lock", "", "replica-1", 10*time.Second)
			advance(6 * time.Second)
			for _, ttl := range []time.Duration{0, time.Hour} {
				if _, ok, _ := s.CompareAndSwap("lock", "replica-2", "replica-2", ttl); ok {
					t.Fatal(`CompareAndSwap("lock", "replica-2", ...) succeeded while the key holds "replica-1"`)
				}
				if _, ok, _ := s.CompareAndSwap("lock", "", "replica-2", ttl); ok {
					t.Fatal(`a create of "lock" succeeded while replica-1 holds it`)
				}
			}
			advance(4 * time.Second)
			if got, _, ok := s.Get("lock"); ok {
				t.Fatalf("10 s after a write with a 10 s TTL the key still holds %q; the failed swaps in between (with ttl 0 and 1 h) must not have moved its deadline: a swap that fails changes nothing", got)
			}
		})
	})
}

func TestStep5_ConcurrentCreatesHaveOneWinner(t *testing.T) {
	// race runs one election: 16 replicas create "leader" at once.
	race := func(s *Store) (winners []string) {
		var (
			wg sync.WaitGroup
			mu sync.Mutex
		)
		start := make(chan struct{})
		for i := range 16 {
			name := string(rune('a' + i))
			wg.Go(func() {
				<-start
				if _, ok, _ := s.CompareAndSwap("leader", "", name, 0); ok {
					mu.Lock()
					winners = append(winners, name)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		return winners
	}
	check := func(s *Store, winners []string, when string) {
		t.Helper()
		if len(winners) == 0 {
			t.Fatalf("%s: 16 replicas raced to create an absent key and none won; exactly one create must succeed", when)
		}
		if len(winners) != 1 {
			t.Fatalf("%s: 16 replicas raced to create the key and %d won (%v); exactly one must win, so the check and the write must happen under one lock, without unlocking in between", when, len(winners), winners)
		}
		if got, _, _ := s.Get("leader"); got != winners[0] {
			t.Fatalf("%s: %q was told it won but the key holds %q: another create overwrote the winner", when, winners[0], got)
		}
	}
	for round := range 2000 {
		s := NewStore()
		check(s, race(s), fmt.Sprint("round ", round))
	}
	// The same race while another client keeps the store busy with slow
	// lookups (a 4 MiB key among 16 others), so the replicas queue up
	// for its lock. A store that unlocks between the check and the write
	// lets the next replica in line check in that gap.
	// A 4 MiB key: hashing it for a lookup takes a millisecond or more.
	hugeKey := strings.Repeat("k", 4<<20)
	for round := range 5 {
		s := NewStore()
		for k := range 16 {
			s.CompareAndSwap(fmt.Sprint("other-", k), "", "x", 0)
		}
		var (
			busy sync.WaitGroup
			done atomic.Bool
		)
		// Two slow clients, so one of them is always holding or
		// waiting for the lock.
		var started sync.WaitGroup
		for range 2 {
			started.Add(1)
			busy.Go(func() {
				s.Get(hugeKey)
				started.Done()
				for !done.Load() {
					s.Get(hugeKey)
				}
			})
		}
		started.Wait()
		winners := race(s)
		done.Store(true)
		busy.Wait()
		check(s, winners, fmt.Sprint("round ", round, " behind a slow client"))
	}
	// Many readers at once, each finding keys that have expired.
	expiredReaders(t)
	// Followers read while leaders write: Get needs the lock too (go test
	// -race reports a Get that reads the map without it).
	s := NewStore()
	var wg sync.WaitGroup
	for i := range 4 {
		key := fmt.Sprint("shard-", i)
		s.CompareAndSwap(key, "", "v", 0)
		wg.Go(func() {
			for range 50 {
				s.CompareAndSwap(key, "v", "v", 0)
			}
		})
		wg.Go(func() {
			for range 50 {
				if v, _, ok := s.Get(key); !ok || v != "v" {
					t.Errorf("Get(%q) while another goroutine rewrote it = (%q, %v), want (\"v\", true): a key being rewritten is never absent", key, v, ok)
					return
				}
			}
		})
	}
	wg.Wait()
}

// expiredReaders has eight readers Get 512 expired keys at once, round
// after round (expiredRounds). Whatever Get does about an expired key
// (nothing, or dropping it), it must do it under a lock that keeps every
// other Get out: a Get that deletes while holding only a read lock
// (RLock) writes the map while other readers use it, and Go's runtime
// stops the program with "concurrent map writes" (or "concurrent map
// read and map write"), even without -race, when two of them meet, as
// they do here.
func expiredReaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys, readers = 512, 8
		names := make([]string, keys)
		for k := range names {
			names[k] = fmt.Sprint("lease-", k)
		}
		for range expiredRounds {
			s := NewStore()
			for _, k := range names {
				s.CompareAndSwap(k, "", "holder", time.Second)
			}
			advance(time.Second)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for r := range readers {
				wg.Go(func() {
					<-start
					for k := range keys {
						key := names[(k*(2*r+1)+r*37)%keys] // each reader in its own order
						if v, _, ok := s.Get(key); ok {
							t.Errorf("Get(%q) 1 s after a write with a 1 s TTL = (%q, true) while other readers looked at expired keys too; want it absent", key, v)
							return
						}
					}
				})
			}
			close(start)
			wg.Wait()
		}
	})
}
