package cas

// Grader for lab 01. Each TestStepK checks one step of README.md.
//
// Wrong solutions these tests defend against (each fails at least one test;
// the ones marked [mutant] are kept in solutions/01_cas/testdata/mutants and
// checked by `go run ./internal/tools/labcheck`):
//   - create that overwrites an existing key because expected == "" is
//     treated as "anything" [mutant create_overwrites.go]: Step 1.
//   - absent key with an expected value failing silently (no
//     ErrKeyNotFound) or, worse, creating the key [mutant
//     missing_key_no_error.go]: Step 2.
//   - a failed compare-and-swap that still writes, or bumps the version:
//     Steps 2 and 3.
//   - a version counted per key, which starts again at 1 after the key
//     expires, so an old holder's version matches again [mutant
//     per_key_version.go]: Step 3.
//   - expiry checked with "after the deadline" instead of "not before it",
//     so the key survives the exact instant its TTL ends [mutant
//     expiry_off_by_one.go]: Step 4.
//   - ttl == 0 treated as "already expired": Step 4.
//   - no mutex, or a check and a write under two separate lock sections
//     [mutant unlocked_check.go]: Step 5 (two winners, or the race
//     detector when run with -race).

import (
	"errors"
	"sync"
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
	if _, _, ok := s.Get("leader"); ok {
		t.Fatal("Get on an empty store reported ok = true")
	}
	v, ok, err := s.CompareAndSwap("leader", "", "replica-1", 0)
	if err != nil || !ok {
		t.Fatalf(`CompareAndSwap("leader", "", "replica-1") on an absent key = (%d, %v, %v), want a version, true, nil`, v, ok, err)
	}
	if v <= 0 {
		t.Errorf("the first write got version %d, want a positive version", v)
	}
	got, gotV, found := s.Get("leader")
	if !found || got != "replica-1" || gotV != v {
		t.Fatalf(`Get("leader") = (%q, %d, %v), want ("replica-1", %d, true)`, got, gotV, found, v)
	}
	// Expected "" means "only if absent", not "whatever is there".
	_, ok, err = s.CompareAndSwap("leader", "", "replica-2", 0)
	if ok || err != nil {
		t.Fatalf(`a second create of an existing key returned (swapped=%v, err=%v), want (false, nil): the key is taken`, ok, err)
	}
	if got, _, _ := s.Get("leader"); got != "replica-1" {
		t.Fatalf("after a losing create the key holds %q, want %q (the first writer keeps it)", got, "replica-1")
	}
}

func TestStep2_SwapOnlyWhenEqual(t *testing.T) {
	s := NewStore()
	t.Run("absent key with an expected value is an error", func(t *testing.T) {
		_, ok, err := s.CompareAndSwap("lock", "0", "1", 0)
		if ok || !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf(`CompareAndSwap("lock", "0", "1") on an absent key = (swapped=%v, err=%v), want (false, ErrKeyNotFound)`, ok, err)
		}
		if _, _, found := s.Get("lock"); found {
			t.Fatal("the failed swap created the key anyway")
		}
	})
	t.Run("equal value swaps", func(t *testing.T) {
		v1, _, _ := s.CompareAndSwap("lock", "", "0", 0)
		v2, ok, err := s.CompareAndSwap("lock", "0", "1", 0)
		if !ok || err != nil {
			t.Fatalf(`CompareAndSwap("lock", "0", "1") while it holds "0" = (swapped=%v, err=%v), want (true, nil)`, ok, err)
		}
		if got, gotV, _ := s.Get("lock"); got != "1" || gotV != v2 {
			t.Fatalf(`after the swap Get = (%q, %d), want ("1", %d)`, got, gotV, v2)
		}
		if v2 <= v1 {
			t.Fatalf("the swap got version %d, not larger than the previous %d", v2, v1)
		}
	})
	t.Run("different value fails and changes nothing", func(t *testing.T) {
		_, before, _ := s.Get("lock")
		_, ok, err := s.CompareAndSwap("lock", "0", "1", 0)
		if ok || err != nil {
			t.Fatalf(`CompareAndSwap("lock", "0", "1") while it holds "1" = (swapped=%v, err=%v), want (false, nil)`, ok, err)
		}
		if got, after, _ := s.Get("lock"); got != "1" || after != before {
			t.Fatalf("a failed swap changed the key to (%q, version %d), want it untouched (\"1\", %d)", got, after, before)
		}
	})
}

func TestStep3_VersionIncreasesOnEveryWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore()
		var last int64
		write := func(key, expected, next string, ttl time.Duration) {
			t.Helper()
			v, ok, err := s.CompareAndSwap(key, expected, next, ttl)
			if !ok || err != nil {
				t.Fatalf("CompareAndSwap(%q, %q, %q) = (%v, %v), want success", key, expected, next, ok, err)
			}
			if v <= last {
				t.Fatalf("write of %q to %q got version %d, want more than the last version handed out (%d)", next, key, v, last)
			}
			last = v
		}
		write("a", "", "x", 0)
		write("a", "x", "y", 0)
		write("b", "", "x", 0)  // another key: the version still grows
		write("a", "y", "y", 0) // writing the same value is still a write
		_, before, _ := s.Get("a")
		s.CompareAndSwap("a", "nope", "z", 0)
		if _, v, _ := s.Get("a"); v != before {
			t.Fatalf("a failed swap moved the version of %q from %d to %d", "a", before, v)
		}
		// A key that expires and is created again must not reuse an old
		// version: a holder from before the expiry would match again.
		write("lease", "", "replica-1", 5*time.Second)
		old := last
		advance(5 * time.Second)
		write("lease", "", "replica-1", 5*time.Second)
		if last <= old {
			t.Fatalf("re-created key got version %d, want more than %d", last, old)
		}
		// Ten create-expire cycles on one key: ten distinct versions.
		fresh := NewStore()
		seen := map[int64]bool{}
		for i := range 10 {
			v, _, _ := fresh.CompareAndSwap("k", "", "v", time.Second)
			if seen[v] {
				t.Fatalf("write %d reused version %d", i, v)
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
			t.Fatalf("1 ms before its 10 s TTL ends the key is (%q, %v), want it still present", got, ok)
		}
		advance(time.Millisecond)
		if got, _, ok := s.Get("lock"); ok {
			t.Fatalf("exactly 10 s after a write with a 10 s TTL the key still holds %q; it must be absent from that instant", got)
		}
		// An expired key behaves like an absent one for CompareAndSwap too.
		if _, ok, err := s.CompareAndSwap("lock", "replica-1", "replica-1", 10*time.Second); ok || !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf("swap expecting the expired value = (swapped=%v, err=%v), want (false, ErrKeyNotFound)", ok, err)
		}
		if _, ok, err := s.CompareAndSwap("lock", "", "replica-2", 10*time.Second); !ok || err != nil {
			t.Fatalf("create over an expired key = (swapped=%v, err=%v), want (true, nil)", ok, err)
		}
		// A swap refreshes the TTL from the moment of the swap.
		advance(6 * time.Second)
		s.CompareAndSwap("lock", "replica-2", "replica-2", 10*time.Second)
		advance(6 * time.Second)
		if _, _, ok := s.Get("lock"); !ok {
			t.Fatal("a key rewritten 6 s ago with a 10 s TTL has expired; the TTL counts from the latest write")
		}
		advance(1000 * time.Hour)
		if _, _, ok := s.Get("forever"); !ok {
			t.Fatal("a key written with ttl == 0 expired; ttl 0 means it never expires")
		}
	})
}

func TestStep5_ConcurrentCreatesHaveOneWinner(t *testing.T) {
	for round := range 2000 {
		s := NewStore()
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
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
		if len(winners) != 1 {
			t.Fatalf("round %d: 16 replicas raced to create the key and %d won (%v); exactly one must win", round, len(winners), winners)
		}
		if got, _, _ := s.Get("leader"); got != winners[0] {
			t.Fatalf("round %d: %q won but the key holds %q", round, winners[0], got)
		}
	}
}
