package lock

// Grader for lab 3.1. Each TestStepK checks one step of README.md.
//
// Wrong solutions these tests defend against (each fails at least one test;
// [mutant] ones are kept in solutions/02_lock/testdata/mutants, more
// learner mistakes in solutions/02_lock/testdata/bugs, and both are checked
// by `go run ./internal/tools/labcheck`):
//   - an Unlock that trusts its own clock (less than a TTL since its lock
//     write) and deletes plainly: Step 3, after an operator deleted the
//     key and another replica took it within that TTL.
//   - a TryLock that overwrites a held key, that treats a key holding its
//     own owner name as "already mine" (a second client with the same name
//     shares the lock), or that accepts an empty owner: Steps 1 and 6.
//   - unlock with a plain Delete [mutant plain_delete_unlock.patch]: Steps 2
//     and 3 (a second Unlock, or a stale one, frees the next holder).
//   - unlock that checks the value but not the version [mutant
//     unlock_without_version.patch]: Step 3 (two replicas that write the same
//     value, or a restarted replica with the same name).
//   - unlock that reads the key, compares, then deletes with a second
//     request: Step 3 pauses the unlocker past its TTL between any two of
//     its requests and lets another replica take the lock.
//   - a blocking lock that sleeps and retries [mutant polling_lock.patch], or
//     spins on TryLock without waiting: Step 4 counts store requests.
//   - a watch started only after the failed try (or after a read), so a
//     release in between is missed [mutant watch_after_try.patch]: Step 4
//     releases the lock right after each of the waiter's requests in turn.
//   - a blocking lock that returns when woken without having taken the
//     lock: Step 4 hands the lock to a competitor in the gap.
//   - a blocking lock that ignores ctx [mutant ignores_context.patch]: Step 5.
//   - a TTL rounded to whole seconds (a sub-second TTL becomes 0, which
//     never expires) or raised to a minimum: Step 1 takes a lock for 1 ns.
//   - a failed TryLock that overwrites the version of the lock the Lock
//     holds, or a version kept outside the Lock (shared by all Locks):
//     Step 2 (the holder tries again; another key's lock comes and goes).
//   - a watch kept in the Lock across calls and stopped when one call
//     gives up: Step 5 calls Lock again after a deadline.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownership-election/playground/labs/kv"
)

const key = "locks/nightly-billing"

// spinLimit is how many requests the store takes at one instant of the
// fake clock before the grader calls it spinning. Time stands still while
// any goroutine runs, so a loop that retries without ever waiting sends
// its requests at one instant; correct code sends a handful.
const spinLimit = 1000

// probe watches a store for the grader: it stops code that spins (which
// would otherwise freeze the fake clock and hang the test), runs a test's
// fault injection after each of the learner's requests, and at the end of
// the test ends any of the learner's goroutines still using the store.
type probe struct {
	t       *testing.T
	store   *kv.Store
	mu      sync.Mutex
	at      time.Time // the instant n counts requests for
	n       int
	spun    bool
	closing bool
	busy    bool        // the injection's own requests are running
	inject  func(kv.Op) // called after each of the learner's requests
}

// newStore returns a store with a probe on it. Call it inside the bubble.
func newStore(t *testing.T) (*kv.Store, *probe) {
	p := &probe{t: t, store: kv.New()}
	p.store.SetHook(p.hook)
	t.Cleanup(func() {
		// t.Context() is cancelled by now. Free the key so a waiter that
		// ignores its context wakes up, and end it at its next request.
		p.mu.Lock()
		p.closing = true
		p.mu.Unlock()
		p.store.Delete(key)
	})
	return p.store, p
}

func (p *probe) hook(op kv.Op) {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		if op.Kind != kv.OpDelete { // the cleanup's own Delete
			runtime.Goexit()
		}
		return
	}
	if p.busy {
		p.mu.Unlock()
		return
	}
	if !op.At.Equal(p.at) {
		p.at, p.n = op.At, 0
	}
	p.n++
	if p.n > spinLimit {
		first := !p.spun
		p.spun = true
		p.mu.Unlock()
		if first {
			p.t.Errorf("your code sent more than %d requests to the store without waiting for anything in between (last: %s): it retries in a loop that never blocks. A waiter must block on store.Watch(key) (or ctx.Done()) between attempts; the grader stopped that goroutine", spinLimit, describe(op))
		}
		runtime.Goexit()
	}
	f := p.inject
	p.mu.Unlock()
	if f != nil {
		f(op)
	}
}

// quiet runs the test's own requests from inside an injection without
// counting them or injecting again.
func (p *probe) quiet(f func()) {
	p.mu.Lock()
	p.busy = true
	p.mu.Unlock()
	f()
	p.mu.Lock()
	p.busy = false
	p.mu.Unlock()
}

// spinning stops the test if the probe caught code spinning: it has
// already said so, and whatever the test checks next would only mislead.
func (p *probe) spinning() {
	p.mu.Lock()
	spun := p.spun
	p.mu.Unlock()
	if spun {
		p.t.FailNow()
	}
}

// describe says in words what a store request was, for messages.
func describe(op kv.Op) string {
	switch op.Kind {
	case kv.OpGet:
		if !op.OK {
			return "a Get that found the key absent"
		}
		return fmt.Sprintf("a Get that found the key held by %q", op.Value)
	case kv.OpCompareAndSwap:
		if op.OK {
			return fmt.Sprintf("a compare-and-swap that wrote %q", op.Value)
		}
		return fmt.Sprintf("a compare-and-swap of %q that failed", op.Value)
	default:
		result := "succeeded"
		if !op.OK {
			result = "failed"
		}
		return fmt.Sprintf("a %s that %s", op.Kind, result)
	}
}

func holds(t *testing.T, s *kv.Store, owner, why string) {
	t.Helper()
	e, ok := s.Get(key)
	if !ok {
		t.Fatalf("the lock key is absent, want it held by %q: %s", owner, why)
	}
	if e.Value != owner {
		t.Fatalf("the lock key holds %q, want %q: %s", e.Value, owner, why)
	}
}

// wantNotHeld checks an Unlock that must refuse. A nil error and a
// different error are different mistakes, with different fixes.
func wantNotHeld(t *testing.T, err error, situation, ifNil string) {
	t.Helper()
	switch {
	case errors.Is(err, ErrNotHeld):
	case err == nil:
		t.Fatalf("%s: Unlock returned nil, want ErrNotHeld: %s", situation, ifNil)
	default:
		t.Fatalf("%s: Unlock returned %q, which does not wrap ErrNotHeld. Callers test errors.Is(err, ErrNotHeld); return it (wrapped with %%w is fine) for every case where this Lock does not hold the key, including kv.ErrConflict and kv.ErrKeyNotFound from the store", situation, err)
	}
}

func TestStep1_TryLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newStore(t)
		a := New(s, key, "replica-a", 10*time.Second)
		b := New(s, key, "replica-b", 10*time.Second)
		ok, err := a.TryLock()
		if err != nil || !ok {
			t.Fatalf("TryLock on a free lock = (%v, %v), want (true, nil)", ok, err)
		}
		holds(t, s, "replica-a", "TryLock writes the owner's name under the key")
		ok, err = b.TryLock()
		if err != nil || ok {
			t.Fatalf("TryLock by replica-b while replica-a holds the lock = (%v, %v), want (false, nil): create the key only if it is absent", ok, err)
		}
		holds(t, s, "replica-a", "a TryLock that fails must not touch the holder's key")
		// A second client with the same owner name (a restarted pod, a copy
		// of the config) is another client: it must not share the lock.
		twin := New(s, key, "replica-a", 10*time.Second)
		if ok, err := twin.TryLock(); err != nil || ok {
			t.Fatalf("TryLock by a second Lock with the same owner name %q while the first holds the key = (%v, %v), want (false, nil): a key holding your name is not proof that this Lock took it, so two clients would hold the lock at once", "replica-a", ok, err)
		}
		time.Sleep(10 * time.Second) // replica-a crashed: its TTL runs out
		if ok, err := b.TryLock(); err != nil || !ok {
			t.Fatalf("TryLock 10 s after a holder with a 10 s TTL crashed = (%v, %v), want (true, nil): the lock key must be written with the TTL, so a crashed holder cannot keep it", ok, err)
		}
		holds(t, s, "replica-b", "replica-b took the lock")
		// An empty owner would be a lock nobody can recognise: the store
		// treats the value "" as "absent", so anyone could take it over.
		nobody := New(s, "locks/other", "", 10*time.Second)
		ok, err = nobody.TryLock()
		if ok || err == nil {
			t.Fatalf(`TryLock by a Lock whose owner is "" = (%v, %v), want (false, an error): a key holding "" looks free to CompareAndSwap(key, "", ...), so a second client would take it over`, ok, err)
		}
		if e, found := s.Get("locks/other"); found {
			t.Fatalf("TryLock with an empty owner returned an error but wrote the key (%+v); refuse before writing anything", e)
		}
		// The smallest TTL there is: the key lives 1 ns, as asked. A TTL
		// rounded to whole seconds (0 s: never expires) or raised to a
		// minimum keeps a crashed holder's lock.
		blink := New(s, "locks/blink", "replica-a", time.Nanosecond)
		if ok, err := blink.TryLock(); !ok || err != nil {
			t.Fatalf("TryLock with a 1 ns TTL on a free lock = (%v, %v), want (true, nil)", ok, err)
		}
		time.Sleep(time.Nanosecond)
		if ok, err := New(s, "locks/blink", "replica-b", 10*time.Second).TryLock(); !ok || err != nil {
			t.Fatalf("TryLock 1 ns after a holder took the lock with a 1 ns TTL = (%v, %v), want (true, nil): write the key with the Lock's TTL as it is, not rounded to seconds or raised to a minimum", ok, err)
		}
	})
}

func TestStep2_UnlockReleasesOnlyYourLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newStore(t)
		a := New(s, key, "replica-a", 10*time.Second)
		b := New(s, key, "replica-b", 10*time.Second)
		wantNotHeld(t, a.Unlock(), "Unlock before ever locking", "this Lock never took the key")
		if ok, err := a.TryLock(); !ok || err != nil {
			t.Fatalf("TryLock on a free lock = (%v, %v), want (true, nil)", ok, err)
		}
		wantNotHeld(t, b.Unlock(), "Unlock by replica-b while replica-a holds the lock", "replica-b does not hold it")
		holds(t, s, "replica-a", "an Unlock by a replica that does not hold the lock must change nothing")
		if err := a.Unlock(); err != nil {
			t.Fatalf("Unlock by the holder = %v, want nil", err)
		}
		if e, ok := s.Get(key); ok {
			t.Fatalf("after the holder's Unlock returned nil the key still holds %+v; Unlock must delete it", e)
		}
		if ok, _ := b.TryLock(); !ok {
			t.Fatal("TryLock after the holder unlocked = false, want true: the key should be gone")
		}
		wantNotHeld(t, a.Unlock(), "a second Unlock by replica-a, after replica-b took the lock", "replica-a released its lock already; this call would release replica-b's")
		holds(t, s, "replica-b", "replica-a's second Unlock must not release replica-b's lock")
	})
	synctest.Test(t, unlockAfterRepeatsAndOtherKeys)
}

// unlockAfterRepeatsAndOtherKeys: the holder tries again (and fails, the
// key is held), and another Lock of the same owner on another key comes
// and goes; neither costs the holder its lock: its Unlock still releases
// it. What a Lock remembers is its own, and a failed try changes none of it.
func unlockAfterRepeatsAndOtherKeys(t *testing.T) {
	s, _ := newStore(t)
	a := New(s, key, "replica-a", 10*time.Second)
	if ok, err := a.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock on a free lock = (%v, %v), want (true, nil)", ok, err)
	}
	if ok, err := a.TryLock(); ok || err != nil {
		t.Fatalf("a second TryLock by the Lock that holds the key = (%v, %v), want (false, nil): the key is not absent, so nothing is created", ok, err)
	}
	other := New(s, "locks/weekly-report", "replica-a", 10*time.Second)
	if ok, err := other.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock of another key by the same owner = (%v, %v), want (true, nil): each key is its own lock", ok, err)
	}
	if err := other.Unlock(); err != nil {
		t.Fatalf("Unlock of the other key's lock by its holder = %v, want nil", err)
	}
	holds(t, s, "replica-a", "a Lock on another key, taken and released, must leave this key alone")
	if err := a.Unlock(); err != nil {
		t.Fatalf("Unlock by the holder, after its own second TryLock failed and another Lock on another key came and went = %v, want nil: keep the version your successful try got, per Lock; a failed try takes nothing and forgets nothing", err)
	}
	if e, ok := s.Get(key); ok {
		t.Fatalf("after the holder's Unlock returned nil the key still holds %+v; Unlock must delete it", e)
	}
}

func TestStep3_StaleUnlockAfterTTL(t *testing.T) {
	// The TTL unlock bug: 1 locks and stalls past its TTL, 2 takes the
	// lock, 1 wakes up and unlocks; if that frees 2's lock, 3 gets in too.
	t.Run("another replica holds the lock now", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, _ := newStore(t)
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
			wantNotHeld(t, p1.Unlock(), "process-1's late Unlock, after its lock expired and process-2 took the key",
				"delete only if the key still holds your value at the version your lock write got")
			holds(t, s, "process-2", "process-1's late Unlock must not release process-2's lock")
			if ok, _ := p3.TryLock(); ok {
				t.Fatal("process-3 took the lock while process-2 holds it: two owners")
			}
		})
	})
	t.Run("the lock expired and nobody took it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, _ := newStore(t)
			p1 := New(s, key, "process-1", 10*time.Second)
			if ok, _ := p1.TryLock(); !ok {
				t.Fatal("process-1 could not take a free lock")
			}
			time.Sleep(15 * time.Second)
			wantNotHeld(t, p1.Unlock(), "process-1's Unlock 15 s into a 10 s lock that nobody took over",
				"the key expired, so for 5 s the critical section was not protected; the caller has to hear that, not \"released\"")
		})
	})
	t.Run("same value, later version", func(t *testing.T) {
		// Both replicas write the same value ("locked"), as in a lock that
		// stores a flag instead of a name; only the version tells the two
		// lock writes apart.
		synctest.Test(t, func(t *testing.T) {
			s, _ := newStore(t)
			first := New(s, key, "locked", 10*time.Second)
			second := New(s, key, "locked", 10*time.Second)
			first.TryLock()
			time.Sleep(15 * time.Second)
			if ok, _ := second.TryLock(); !ok {
				t.Fatal("the second client could not take the expired lock")
			}
			wantNotHeld(t, first.Unlock(), "the first client's late Unlock, after its lock expired and a second client wrote the same value",
				"the value matches but the version does not; compare the version your lock write got, not only the value")
			if _, ok := s.Get(key); !ok {
				t.Fatal("the first client's stale Unlock deleted the second client's lock (same value, newer version)")
			}
		})
	})
	t.Run("an operator deleted the key and another replica took it", func(t *testing.T) {
		// Well within replica-a's TTL by any clock: what tells replica-a
		// that the lock is no longer its own is the store, not the time.
		synctest.Test(t, func(t *testing.T) {
			s, _ := newStore(t)
			a := New(s, key, "replica-a", 10*time.Second)
			b := New(s, key, "replica-b", 10*time.Second)
			if ok, _ := a.TryLock(); !ok {
				t.Fatal("replica-a could not take a free lock")
			}
			time.Sleep(2 * time.Second)
			s.Delete(key) // an operator clears the lock by hand
			if ok, _ := b.TryLock(); !ok {
				t.Fatal("replica-b could not take the lock after an operator deleted the key")
			}
			wantNotHeld(t, a.Unlock(), "replica-a's Unlock 2 s into its 10 s lock, after an operator deleted the key and replica-b took it",
				"less than a TTL since the lock was taken does not mean it is still yours; ask the store, with your value and version, in the delete itself")
			holds(t, s, "replica-b", "replica-a's Unlock must not release replica-b's lock, however recent replica-a's own lock write")
		})
	})
	t.Run("the lock expires in the middle of your Unlock", func(t *testing.T) {
		// The holder pauses past its TTL between two requests of its own
		// Unlock (after each request in turn), and another replica takes
		// the lock in that gap. Whatever Unlock returns, it must not
		// delete the new holder's key: check and delete in one request.
		for k := 1; k <= 6; k++ {
			done := false
			synctest.Test(t, func(t *testing.T) {
				s, p := newStore(t)
				a := New(s, key, "replica-a", 10*time.Second)
				b := New(s, key, "replica-b", 10*time.Second)
				if ok, _ := a.TryLock(); !ok {
					t.Fatal("replica-a could not take a free lock")
				}
				n, fired := 0, ""
				p.inject = func(op kv.Op) {
					if n++; n != k {
						return
					}
					fired = describe(op)
					p.quiet(func() {
						time.Sleep(15 * time.Second) // a GC pause; the lock expires
						b.TryLock()
					})
				}
				a.Unlock()
				p.inject = nil
				if fired == "" {
					done = true // Unlock sent fewer than k requests: every gap was tried
					return
				}
				if e, ok := s.Get(key); !ok || e.Value != "replica-b" {
					t.Fatalf("right after Unlock's request number %d (%s), replica-a paused 15 s, its 10 s lock expired and replica-b took it; when Unlock went on it deleted replica-b's lock (the key is now %+v, present=%v). Check and delete must be one request: CompareAndDelete with your value and version", k, fired, e, ok)
				}
			})
			if done || t.Failed() {
				break
			}
		}
	})
}

// waiter is a Lock call running in its own goroutine.
type waiter struct {
	done chan struct{}
	err  error
	at   time.Time
}

func startLock(ctx context.Context, l *Lock) *waiter {
	w := &waiter{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.err = l.Lock(ctx)
		w.at = time.Now()
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
			s, p := newStore(t)
			holder := New(s, key, "holder", time.Hour*24)
			holder.TryLock()
			before := s.Requests()
			w := startLock(t.Context(), New(s, key, "waiter", 10*time.Second))
			time.Sleep(time.Hour) // the holder keeps the lock for an hour
			synctest.Wait()
			p.spinning()
			if w.returned() {
				t.Fatalf("Lock returned %v while another replica held the lock; it must block until it holds the lock", w.err)
			}
			if n := s.Requests() - before; n > 3 {
				t.Fatalf("while waiting one hour for a held lock, Lock sent %d requests to the store; want at most 3. Do not poll: wait on store.Watch(key) and try again when the key changes", n)
			}
			released := time.Now()
			if err := holder.Unlock(); err != nil {
				t.Fatalf("the holder's own Unlock = %v, want nil; see step 2", err)
			}
			synctest.Wait()
			p.spinning()
			if !w.returned() {
				t.Fatal("the lock was released but the waiting Lock did not take it at that instant; it should wake up on the change notification, not on a timer")
			}
			if w.err != nil || !w.at.Equal(released) {
				t.Fatalf("Lock returned %v, %v after the release; want nil, at the instant of the release", w.err, w.at.Sub(released))
			}
			holds(t, s, "waiter", "Lock returned nil, so it must hold the key")
		})
	})
	t.Run("woken when the holder's TTL runs out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, p := newStore(t)
			crashed := New(s, key, "crashed", 10*time.Second)
			crashed.TryLock() // and never unlocks
			start := time.Now()
			w := startLock(t.Context(), New(s, key, "waiter", 10*time.Second))
			select {
			case <-w.done:
			case <-time.After(time.Hour):
				t.Fatal("Lock was still waiting an hour after the holder's 10 s TTL ran out; an expiry is a change too, and the watch reports it")
			}
			p.spinning()
			if w.err != nil || w.at.Sub(start) != 10*time.Second {
				t.Fatalf("Lock returned %v after %v, want nil after exactly 10s (when the key expired)", w.err, w.at.Sub(start))
			}
			holds(t, s, "waiter", "Lock returned nil, so it must hold the key")
		})
	})
	// The holder releases right after the waiter's request number k, for
	// k = 1, 2, ... until the waiter blocks before sending k requests. A
	// waiter that starts watching only after it has seen the lock held
	// misses the release; one that reads before it tries is fine.
	t.Run("a release right after any of your requests is not missed", func(t *testing.T) {
		gaps(t, false)
	})
	// Same, but a competitor takes the lock in the gap and crashes (its
	// 10 s TTL runs out): the waiter must not return before it really has
	// the lock, and must take it when the competitor's key expires.
	t.Run("a competitor takes the lock right after any of your requests", func(t *testing.T) {
		gaps(t, true)
	})
}

func gaps(t *testing.T, competitor bool) {
	for k := 1; k <= 8; k++ {
		done := false
		synctest.Test(t, func(t *testing.T) {
			s, p := newStore(t)
			holder := New(s, key, "holder", time.Hour)
			rival := New(s, key, "rival", 10*time.Second)
			holder.TryLock()
			n, fired := 0, ""
			var firedAt time.Time
			p.inject = func(op kv.Op) {
				if n++; n != k {
					return
				}
				fired, firedAt = describe(op), time.Now()
				p.quiet(func() {
					holder.Unlock()
					if competitor {
						rival.TryLock()
					}
				})
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			w := startLock(ctx, New(s, key, "waiter", time.Hour))
			synctest.Wait()
			p.spinning()
			if fired == "" {
				// The waiter sent fewer than k requests.
				if w.returned() {
					t.Fatalf("Lock returned %v after %d requests while another replica held the lock; it must block until it holds the lock", w.err, n)
				}
				if n == 0 {
					t.Fatal("Lock blocked without sending a single request while the lock was held; it must try to take the lock before it waits, or it never takes a free one")
				}
				// It is blocked: every gap has been tried. Let it finish.
				done = true
				cancel()
				<-w.done
				return
			}
			<-w.done
			p.spinning()
			switch {
			case !competitor && w.err != nil:
				t.Fatalf("right after your request number %d (%s) the holder released the lock, and Lock was still waiting an hour later (it returned %v): the release signal was lost. Start watching the key before the request that can find it held, so a change in between leaves a signal in the channel", k, fired, w.err)
			case competitor && w.err != nil:
				t.Fatalf("right after your request number %d (%s) the holder released the lock and a rival took it and crashed; its key expired 10 s later, but Lock was still waiting an hour later (it returned %v): after each change, try again and keep waiting while the lock is held", k, fired, w.err)
			case competitor && w.at.Sub(firedAt) != 10*time.Second:
				t.Fatalf("right after your request number %d (%s) the holder released the lock and a rival took it; Lock returned nil %v later, want exactly 10s (when the rival's key expired). A change notification only says the key changed: take the lock with a compare-and-swap and look at its result", k, fired, w.at.Sub(firedAt))
			}
			holds(t, s, "waiter", "Lock returned nil, so it must hold the key")
		})
		if done || t.Failed() {
			break
		}
	}
}

func TestStep5_LockHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, p := newStore(t)
		holder := New(s, key, "holder", 0)
		holder.TryLock()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		impatient := New(s, key, "impatient", 10*time.Second)
		w := startLock(ctx, impatient)
		select {
		case <-w.done:
		case <-time.After(time.Hour):
			t.Fatal("Lock was still waiting an hour after its context's 5 s deadline; select on ctx.Done() as well as on the watch")
		}
		p.spinning()
		if !errors.Is(w.err, context.DeadlineExceeded) || w.at.Sub(start) != 5*time.Second {
			t.Fatalf("Lock with a 5 s deadline on a held lock returned %v after %v, want context.DeadlineExceeded after exactly 5s: the caller gave up and must get control back at once", w.err, w.at.Sub(start))
		}
		holder.Unlock()
		synctest.Wait()
		if e, ok := s.Get(key); ok {
			t.Fatalf("the lock is held by %q after the impatient Lock gave up; it must not take it later", e.Value)
		}
		lockAgainAfterGivingUp(t, s, p, impatient)
		// A try that fails with an error (here: the empty owner that
		// TryLock refuses) will fail the same way every time: waiting for
		// a change cannot help, so Lock returns the error at once.
		start = time.Now()
		w = startLock(t.Context(), New(s, "locks/other", "", 10*time.Second))
		select {
		case <-w.done:
		case <-time.After(time.Hour):
			t.Fatal("Lock with an empty owner, on a free lock, was still waiting an hour later; when TryLock returns an error, Lock must return it instead of waiting for a change")
		}
		p.spinning()
		if w.err == nil || errors.Is(w.err, context.Canceled) || w.at != start {
			t.Fatalf("Lock with an empty owner returned %v after %v, want TryLock's error at once: an error from a try is not \"the lock is taken\"", w.err, w.at.Sub(start))
		}
	})
}

// lockAgainAfterGivingUp: a Lock whose last Lock call gave up (its
// context ended) is asked again, with a fresh context, while another
// replica holds the key; it must wait again and take the lock the instant
// it is released, as if the first call had never been.
func lockAgainAfterGivingUp(t *testing.T, s *kv.Store, p *probe, l *Lock) {
	t.Helper()
	other := New(s, key, "holder-2", 0)
	if ok, _ := other.TryLock(); !ok {
		t.Fatal("test setup: holder-2 could not take the free lock")
	}
	w := startLock(t.Context(), l)
	time.Sleep(time.Minute)
	p.spinning()
	if w.returned() {
		t.Fatalf("Lock, called again after an earlier call gave up, returned %v while holder-2 holds the lock; it must wait", w.err)
	}
	released := time.Now()
	other.Unlock()
	select {
	case <-w.done:
	case <-time.After(time.Hour):
		t.Fatal("Lock, called again after an earlier call gave up at its deadline, was still waiting an hour after the lock was released: a call's watch ends with the call; each Lock call needs a watch of its own that is open before its first try")
	}
	p.spinning()
	if w.err != nil || !w.at.Equal(released) {
		t.Fatalf("Lock, called again after an earlier call gave up, returned %v %v after the release, want nil at once", w.err, w.at.Sub(released))
	}
	holds(t, s, "impatient", "the second Lock call returned nil")
	if err := l.Unlock(); err != nil {
		t.Fatalf("Unlock after the second Lock call took the lock = %v, want nil", err)
	}
}

func TestStep6_OneHolderAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, p := newStore(t)
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
					t.Errorf("Lock by a replica among 8 = %v, want nil", err)
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
					t.Errorf("Unlock by the holder after its critical section = %v, want nil", err)
				}
			})
		}
		wg.Wait()
		p.spinning()
		if maxSeen > 1 {
			t.Fatalf("%d replicas were inside the critical section at once, want 1: Lock returned nil to a replica that did not hold the lock", maxSeen)
		}
		if d := time.Since(start); d != 8*time.Second {
			t.Fatalf("8 one-second critical sections took %v, want 8s: each release should hand the lock over at once", d)
		}
	})
}
