package lock

// Grader for lab 02. Each TestStepK checks one step of README.md.
//
// Wrong solutions these tests defend against (each fails at least one test;
// [mutant] ones are kept in solutions/02_lock/testdata/mutants and checked
// by `go run ./internal/tools/labcheck`):
//   - unlock with a plain Delete [mutant plain_delete_unlock.patch]: Steps 2
//     and 3 (a second Unlock, or a stale one, frees the next holder).
//   - unlock that checks the value but not the version [mutant
//     unlock_without_version.patch]: Step 3 (two replicas that write the same
//     value, or a restarted replica with the same name).
//   - a blocking lock that sleeps and retries [mutant polling_lock.patch]:
//     Step 4 counts store requests during an hour of waiting and checks the
//     waiter gets the lock at the very instant it is released.
//   - a watch started only after the failed try, so a release in between
//     is missed [mutant watch_after_try.patch]: Step 4.
//   - a blocking lock that ignores ctx [mutant ignores_context.patch]: Step 5.
//   - a TryLock that overwrites a held key: Steps 1 and 6.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownership-election/playground/labs/kv"
)

const key = "locks/nightly-billing"

func holds(t *testing.T, s *kv.Store, owner string) {
	t.Helper()
	e, ok := s.Get(key)
	if !ok {
		t.Fatalf("the lock key is absent, want it held by %q", owner)
	}
	if e.Value != owner {
		t.Fatalf("the lock key holds %q, want %q", e.Value, owner)
	}
}

func TestStep1_TryLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		a := New(s, key, "replica-a", 10*time.Second)
		b := New(s, key, "replica-b", 10*time.Second)
		ok, err := a.TryLock()
		if err != nil || !ok {
			t.Fatalf("TryLock on a free lock = (%v, %v), want (true, nil)", ok, err)
		}
		holds(t, s, "replica-a")
		ok, err = b.TryLock()
		if err != nil || ok {
			t.Fatalf("TryLock on a held lock = (%v, %v), want (false, nil)", ok, err)
		}
		holds(t, s, "replica-a")
		time.Sleep(10 * time.Second) // replica-a crashed: its TTL runs out
		if ok, err := b.TryLock(); err != nil || !ok {
			t.Fatalf("TryLock after the holder's TTL ran out = (%v, %v), want (true, nil): the lock key must be written with the TTL", ok, err)
		}
		holds(t, s, "replica-b")
	})
}

func TestStep2_UnlockReleasesOnlyYourLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		a := New(s, key, "replica-a", 10*time.Second)
		b := New(s, key, "replica-b", 10*time.Second)
		if err := a.Unlock(); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Unlock before ever locking = %v, want ErrNotHeld", err)
		}
		if ok, err := a.TryLock(); !ok || err != nil {
			t.Fatalf("TryLock = (%v, %v)", ok, err)
		}
		if err := b.Unlock(); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Unlock by a replica that does not hold the lock = %v, want ErrNotHeld", err)
		}
		holds(t, s, "replica-a")
		if err := a.Unlock(); err != nil {
			t.Fatalf("Unlock by the holder = %v, want nil", err)
		}
		if _, ok := s.Get(key); ok {
			t.Fatal("after Unlock the lock key is still there")
		}
		if ok, _ := b.TryLock(); !ok {
			t.Fatal("TryLock after the holder unlocked = false, want true")
		}
		if err := a.Unlock(); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("a second Unlock by replica-a = %v, want ErrNotHeld", err)
		}
		holds(t, s, "replica-b")
	})
}

func TestStep3_StaleUnlockAfterTTL(t *testing.T) {
	// The TTL unlock bug: 1 locks and stalls past its TTL, 2 takes the
	// lock, 1 wakes up and unlocks; if that frees 2's lock, 3 gets in too.
	t.Run("another replica holds the lock now", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			p1 := New(s, key, "process-1", 10*time.Second)
			p2 := New(s, key, "process-2", 10*time.Second)
			p3 := New(s, key, "process-3", 10*time.Second)
			if ok, _ := p1.TryLock(); !ok {
				t.Fatal("process-1 could not take a free lock")
			}
			time.Sleep(15 * time.Second) // process-1 stalls (GC pause)
			if ok, _ := p2.TryLock(); !ok {
				t.Fatal("process-2 could not take the lock after process-1's TTL ran out")
			}
			if err := p1.Unlock(); !errors.Is(err, ErrNotHeld) {
				t.Errorf("process-1's late Unlock = %v, want ErrNotHeld: its lock expired and process-2 holds the key now", err)
			}
			holds(t, s, "process-2")
			if ok, _ := p3.TryLock(); ok {
				t.Fatal("process-3 took the lock while process-2 holds it: two owners")
			}
		})
	})
	t.Run("same value, later version", func(t *testing.T) {
		// Both replicas write the same value ("locked"), as in a lock that
		// stores a flag instead of a name; only the version tells the two
		// lock writes apart.
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			first := New(s, key, "locked", 10*time.Second)
			second := New(s, key, "locked", 10*time.Second)
			first.TryLock()
			time.Sleep(15 * time.Second)
			if ok, _ := second.TryLock(); !ok {
				t.Fatal("the second client could not take the expired lock")
			}
			if err := first.Unlock(); !errors.Is(err, ErrNotHeld) {
				t.Errorf("the first client's late Unlock = %v, want ErrNotHeld: compare the version of your lock write, not only the value", err)
			}
			if _, ok := s.Get(key); !ok {
				t.Fatal("the stale Unlock deleted the second client's lock")
			}
		})
	})
}

// waitFor runs l.Lock(ctx) in a goroutine and reports when it returned.
type waiter struct {
	done chan struct{}
	err  error
	at   time.Time
}

func startLock(ctx context.Context, l *Lock) *waiter {
	w := &waiter{done: make(chan struct{})}
	go func() {
		w.err = l.Lock(ctx)
		w.at = time.Now()
		close(w.done)
	}()
	return w
}

func (w *waiter) returned() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func TestStep4_LockWaitsForChange(t *testing.T) {
	t.Run("woken by the release, without polling", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			holder := New(s, key, "holder", time.Hour*24)
			holder.TryLock()
			before := s.Requests()
			w := startLock(t.Context(), New(s, key, "waiter", 10*time.Second))
			time.Sleep(time.Hour) // the holder keeps the lock for an hour
			synctest.Wait()
			if w.returned() {
				t.Fatalf("Lock returned (err %v) while another replica held the lock", w.err)
			}
			if n := s.Requests() - before; n > 3 {
				t.Fatalf("while waiting one hour for a held lock, Lock sent %d requests to the store; want at most 3. Do not poll: wait on store.Watch(key) and try again when the key changes", n)
			}
			released := time.Now()
			if err := holder.Unlock(); err != nil {
				t.Fatalf("holder.Unlock = %v", err)
			}
			synctest.Wait()
			if !w.returned() {
				t.Fatal("the lock was released but the waiting Lock did not take it at that instant; it should wake up on the change notification, not on a timer")
			}
			if w.err != nil || !w.at.Equal(released) {
				t.Fatalf("Lock returned %v after %v; want nil, at the instant of the release", w.err, w.at.Sub(released))
			}
			holds(t, s, "waiter")
		})
	})
	t.Run("woken when the holder's TTL runs out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			crashed := New(s, key, "crashed", 10*time.Second)
			crashed.TryLock() // and never unlocks
			start := time.Now()
			w := startLock(t.Context(), New(s, key, "waiter", 10*time.Second))
			select {
			case <-w.done:
			case <-time.After(time.Hour):
				t.Fatal("Lock was still waiting an hour after the holder's 10 s TTL ran out")
			}
			if w.err != nil || w.at.Sub(start) != 10*time.Second {
				t.Fatalf("Lock returned %v after %v, want nil after exactly 10s (when the key expired)", w.err, w.at.Sub(start))
			}
			holds(t, s, "waiter")
		})
	})
	t.Run("a release between the try and the wait is not missed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			holder := New(s, key, "holder", time.Hour)
			holder.TryLock()
			var once sync.Once
			// Right after the waiter's first failed attempt, and before it
			// can start waiting, the holder releases.
			s.SetHook(func(op kv.Op) {
				if op.Kind != kv.OpGet && op.Value == "waiter" && !op.OK {
					once.Do(func() { holder.Unlock() })
				}
			})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err := New(s, key, "waiter", time.Hour).Lock(ctx)
			if err != nil {
				t.Fatalf("Lock = %v: the holder released right after your failed try and you waited a minute for a change that had already happened. Start watching the key before you try", err)
			}
			holds(t, s, "waiter")
		})
	})
}

func TestStep5_LockHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		holder := New(s, key, "holder", 0)
		holder.TryLock()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		w := startLock(ctx, New(s, key, "impatient", 10*time.Second))
		select {
		case <-w.done:
		case <-time.After(time.Hour):
			holder.Unlock() // let a Lock that ignores ctx finish
			t.Fatal("Lock was still waiting an hour after its context's 5 s deadline")
		}
		if !errors.Is(w.err, context.DeadlineExceeded) || w.at.Sub(start) != 5*time.Second {
			t.Fatalf("Lock returned %v after %v, want context.DeadlineExceeded after exactly 5s", w.err, w.at.Sub(start))
		}
		holder.Unlock()
		synctest.Wait()
		if e, ok := s.Get(key); ok {
			t.Fatalf("the lock is held by %q after the impatient Lock gave up; it must not take it later", e.Value)
		}
	})
}

func TestStep6_OneHolderAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		var (
			mu      sync.Mutex
			inside  int
			maxSeen int
			wg      sync.WaitGroup
		)
		start := time.Now()
		for i := range 8 {
			l := New(s, key, "replica-"+string(rune('a'+i)), time.Minute)
			wg.Go(func() {
				if err := l.Lock(t.Context()); err != nil {
					t.Errorf("Lock: %v", err)
					return
				}
				mu.Lock()
				inside++
				maxSeen = max(maxSeen, inside)
				mu.Unlock()
				time.Sleep(time.Second) // the critical section
				mu.Lock()
				inside--
				mu.Unlock()
				if err := l.Unlock(); err != nil {
					t.Errorf("Unlock: %v", err)
				}
			})
		}
		wg.Wait()
		if maxSeen != 1 {
			t.Fatalf("%d replicas were inside the critical section at once, want 1", maxSeen)
		}
		if d := time.Since(start); d != 8*time.Second {
			t.Fatalf("8 one-second critical sections took %v, want 8s: each release should hand the lock over at once", d)
		}
	})
}
