package lease

// Grader for lab 4.1. Each TestStepK checks one step of README.md.
//
// Wrong solutions these tests defend against (each fails at least one test;
// [mutant] ones are kept in solutions/03_lease/testdata/mutants and checked
// by `go run ./internal/tools/labcheck`, with the learner bugs in
// solutions/03_lease/testdata/bugs):
//   - renewing by owner value only, without the version [mutant
//     renew_without_version.patch]: Step 2 (a restarted replica with the same
//     name would have its lease renewed by the old process).
//   - renewing with a plain write, which brings back an expired lease that
//     another replica could already have taken [mutant
//     renew_recreates.patch]: Step 2.
//   - renewing once per TTL instead of every TTL/2 [mutant
//     renew_every_ttl.patch]: Step 3.
//   - not stopping after a failed renewal, or not calling onLost [mutant
//     keeps_running_after_loss.patch]: Step 4.
//   - MayAct with <= at 0.75 x TTL, or measured from the first acquire
//     instead of the last renewal [mutants may_act_inclusive.patch,
//     may_act_from_acquire.patch]: Step 5.
//   - a lease that still says MayAct after it was lost, checked at the
//     instant of the loss while the 0.75 x TTL window is still open:
//     Steps 4 and 5.
//   - MayAct or Renew reading the lease's fields without l.mu while Run
//     renews: Step 3 under -race.
//   - a renewal split into a read and a value-only write: Step 2 pauses
//     the holder past its TTL between any two of Renew's requests while a
//     restarted replica with the same name takes the lease.
//   - a Renew that falls back to re-acquiring the key, or an Acquire that
//     treats a key holding its own name as its own lease: Steps 1 and 2.
//   - Acquire with an empty owner or a TTL that is not positive: Step 1.
//   - Renew that compares with the store's latest version (Version())
//     rather than its own last write's, or a lease's state kept in
//     package variables (shared by every Lease): Step 1, where another
//     lease on another key is acquired and renewed in between.
//   - Run that returns context.Canceled whatever ended its context (not
//     ctx.Err()), or that gives the lease back with a plain Delete, or
//     keeps MayAct true after giving it back: Step 3.
//   - Run that ignores its context: Step 3 says so (and stops it) instead
//     of a synctest deadlock.
//   - Run with time.NewTicker(l.ttl / 2), which panics for a 1 ns TTL, or
//     a timer re-armed with TTL/2 = 0, which renews without ever waiting:
//     Step 3 runs the shortest TTL and names both (the probe ends a flood
//     of requests at one instant of the fake clock).
//   - Run that polls the clock, or selects with a default case, instead
//     of waiting: no request is sent and the fake clock stops; the stall
//     guard (labtest.Bubble) ends the run after a few seconds with "Run
//     never waited between renewals" and the place in Run.
//   - Run holding l.mu while it waits for its ticker: MayAct waits for
//     the mutex, which stops the fake clock too; the stall guard says so
//     and shows Run waiting with it.
//   - the 0.75 x TTL window counted from the reply to the acquire or
//     renewal instead of from when the request was sent: Step 5 delays
//     the replies by 1 s.
//   - Validate with < instead of <= (rejects a policy that fits exactly)
//     [mutant validate_strict.patch], or one that forgets the factor 2: Step 6.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ownership-election/playground/labs/internal/labtest"
	"github.com/ownership-election/playground/labs/kv"
)

const key = "leases/scheduler"

// bubble runs f in a testing/synctest bubble (fake time) under labtest's
// stall guard: if the learner's code keeps the fake clock from moving (a
// Run that polls instead of waiting, a mutex locked twice), the run ends
// after labtest.StallBudget with a report naming the step, instead of
// hanging until the 30 s timeout.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	labtest.Bubble(t, f, labtest.Hint{
		Func: "(*Lease).Run",
		Says: "Run never waited between renewals (it must block on its ticker or timer and on ctx.Done() in a select with no default case)",
	})
}

// probe watches a store for the grader: it calls a test's observer or
// fault injection after each request, and once the test is over it ends
// any of the learner's goroutines (a Run that did not stop) at their next
// request, so the bubble can finish instead of deadlocking.
type probe struct {
	t       *testing.T
	store   *kv.Store
	mu      sync.Mutex
	closing bool
	busy    bool
	observe func(kv.Op)
	// The requests sent at one instant of the fake clock: a flood of them
	// is a loop that never waits, and the clock cannot move while it runs.
	lastAt time.Time
	sameAt int
}

// floodLimit is how many requests at one instant of the fake clock the
// probe lets through before it reports a loop that never waits and ends
// the goroutine sending them.
const floodLimit = 1000

// newStore returns a store with a probe on it. Call it inside the bubble.
func newStore(t *testing.T) (*kv.Store, *probe) {
	p := &probe{t: t, store: kv.New()}
	p.store.SetHook(p.hook)
	t.Cleanup(p.close)
	return p.store, p
}

// close makes the probe end the goroutine of every later request.
func (p *probe) close() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
}

func (p *probe) hook(op kv.Op) {
	labtest.Progress()
	p.mu.Lock()
	closing, busy, f := p.closing, p.busy, p.observe
	if op.At.Equal(p.lastAt) {
		p.sameAt++
	} else {
		p.lastAt, p.sameAt = op.At, 1
	}
	flood := p.sameAt
	p.mu.Unlock()
	switch {
	case closing:
		runtime.Goexit()
	case flood == floodLimit:
		p.t.Errorf("your code sent %d requests to the store at one and the same instant (the last was %s) without ever waiting in between: a loop with no pause in it, such as a timer or ticker of 0 or a retry at once. Under the tests' fake clock no time passes while a goroutine is busy, so such a loop runs forever; the test ends it here", floodLimit, describe(op))
		runtime.Goexit()
	case flood > floodLimit:
		runtime.Goexit()
	case busy || f == nil:
	default:
		f(op)
	}
}

func (p *probe) watch(f func(kv.Op)) {
	p.mu.Lock()
	p.observe = f
	p.mu.Unlock()
}

// quiet runs the test's own requests from inside an observer without
// observing them.
func (p *probe) quiet(f func()) {
	p.mu.Lock()
	p.busy = true
	p.mu.Unlock()
	f()
	p.mu.Lock()
	p.busy = false
	p.mu.Unlock()
}

// runner is a Run call in its own goroutine.
type runner struct {
	exited chan struct{}
	err    error
	at     time.Time
}

// startRun runs l.Run(ctx, onLost) in a goroutine. If Run has not returned
// when the test ends, the cleanup lets the fake clock run for one more
// TTL: a Run that ignores its context then renews once more, and the
// probe ends it at that request.
func startRun(t *testing.T, p *probe, ctx context.Context, l *Lease, ttl time.Duration, onLost func()) *runner {
	r := &runner{exited: make(chan struct{})}
	go func() {
		defer close(r.exited)
		defer func() {
			// A panic would end the whole test binary; say what it was
			// instead. (A runtime.Goexit from the probe is no panic.)
			if v := recover(); v != nil {
				r.err = fmt.Errorf("Run panicked: %v", v)
				why := ""
				if ttl/2 <= 0 {
					why = fmt.Sprintf(". With a %v TTL, TTL/2 rounds down to 0, and time.NewTicker and Ticker.Reset panic on an interval that is not positive: wait at least 1 ns between renewals", ttl)
				}
				t.Errorf("Run with a %v TTL panicked: %v%s", ttl, v, why)
			}
		}()
		r.err = l.Run(ctx, onLost)
		r.at = time.Now()
	}()
	t.Cleanup(func() {
		p.close()
		select {
		case <-r.exited:
		case <-time.After(2 * ttl):
			t.Errorf("Run was still running %v after the test ended without sending a single request: it is blocked on something other than its context and its ticker, and it will never stop", 2*ttl)
		}
	})
	return r
}

// within reports whether Run returned within d of fake time.
func (r *runner) within(d time.Duration) bool {
	select {
	case <-r.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// describe says in words what a store request was, for messages.
func describe(op kv.Op) string {
	result := "succeeded"
	if !op.OK {
		result = "failed"
	}
	switch op.Kind {
	case kv.OpGet:
		if !op.OK {
			return "a Get that found the key absent"
		}
		return fmt.Sprintf("a Get that found the key held by %q", op.Value)
	case kv.OpCompareAndSwap:
		return fmt.Sprintf("a compare-and-swap writing %q that %s", op.Value, result)
	case kv.OpUpdate:
		return fmt.Sprintf("an update writing %q that %s", op.Value, result)
	default:
		return fmt.Sprintf("a %s that %s", op.Kind, result)
	}
}

func acquire(t *testing.T, s *kv.Store, owner string, ttl time.Duration) *Lease {
	t.Helper()
	l, err := Acquire(s, key, owner, ttl)
	if err != nil {
		t.Fatalf("Acquire(%q) on a free key = %v, want nil", owner, err)
	}
	if l == nil {
		t.Fatalf("Acquire(%q) returned a nil *Lease", owner)
	}
	return l
}

func holder(s *kv.Store) string {
	e, _ := s.Get(key)
	return e.Value
}

// wantLost checks a renewal that must fail.
func wantLost(t *testing.T, err error, situation, ifNil string) {
	t.Helper()
	switch {
	case errors.Is(err, ErrLost):
	case err == nil:
		t.Fatalf("%s: Renew returned nil, want ErrLost: %s", situation, ifNil)
	default:
		t.Fatalf("%s: Renew returned %q, which does not wrap ErrLost. Callers test errors.Is(err, ErrLost); return it (wrapped with %%w is fine) whenever the lease is no longer yours, including kv.ErrConflict and kv.ErrKeyNotFound from the store", situation, err)
	}
}

func TestStep1_AcquireAndRenew(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, _ := newStore(t)
		a := acquire(t, s, "replica-a", 10*time.Second)
		if got := holder(s); got != "replica-a" {
			t.Fatalf("after Acquire(%q) the key holds %q: Acquire must write the owner's name under the key", "replica-a", got)
		}
		if _, err := Acquire(s, key, "replica-b", 10*time.Second); !errors.Is(err, ErrHeld) {
			t.Fatalf("Acquire by replica-b while replica-a holds the lease = %v, want ErrHeld: create the key only if it is absent, and say why you could not", err)
		}
		// Another process with the same name (a restarted pod) is another
		// holder: it must not get a *Lease on replica-a's key.
		if _, err := Acquire(s, key, "replica-a", 10*time.Second); !errors.Is(err, ErrHeld) {
			t.Fatalf("Acquire by a second process named %q while the first holds the lease = %v, want ErrHeld: a key holding your name is not proof that the lease is yours", "replica-a", err)
		}
		first, _ := s.Get(key)
		time.Sleep(8 * time.Second)
		if err := a.Renew(); err != nil {
			t.Fatalf("Renew 8 s into a 10 s lease = %v, want nil", err)
		}
		renewed, _ := s.Get(key)
		if renewed.Value != "replica-a" || renewed.Version <= first.Version {
			t.Fatalf("after Renew the key is %+v; want the same owner with a newer version than %d: a renewal is a write", renewed, first.Version)
		}
		time.Sleep(8 * time.Second) // 16 s after Acquire, 8 s after Renew
		if got := holder(s); got != "replica-a" {
			t.Fatal("the lease expired 10 s after Acquire although it was renewed at 8 s: Renew must write a fresh TTL")
		}
		time.Sleep(2 * time.Second)
		if got := holder(s); got != "" {
			t.Fatalf("10 s after the last renewal the key still holds %q; the renewal must write the lease's TTL, not a longer one", got)
		}
		// Edge values: a lease must be able to run out, and must say whose it is.
		for _, c := range []struct {
			owner string
			ttl   time.Duration
			why   string
		}{
			{"replica-c", 0, "the store keeps a key written with TTL 0 forever, so a crashed holder would keep the lease forever"},
			{"replica-c", -time.Second, "a negative TTL is a mistake in the caller's configuration"},
			{"", 10 * time.Second, "the store treats a key holding \"\" as absent, so anybody could take the lease over"},
		} {
			if _, err := Acquire(s, "leases/other", c.owner, c.ttl); err == nil {
				t.Fatalf("Acquire(owner %q, ttl %v) returned a lease and no error, want an error: %s", c.owner, c.ttl, c.why)
			}
			if e, ok := s.Get("leases/other"); ok {
				t.Fatalf("Acquire(owner %q, ttl %v) returned an error but wrote the key (%+v); check the arguments before writing", c.owner, c.ttl, e)
			}
		}
	})
	bubble(t, otherLeasesInBetween)
}

// otherLeasesInBetween: another lease, on another key, is acquired and
// renewed between replica-a's own writes, and replica-a renews twice at
// one instant. None of it is replica-a's business: its renewals compare
// the version of its own last write (not the store's latest), and its
// MayAct window moves only with its own writes. What a Lease remembers is
// its own.
func otherLeasesInBetween(t *testing.T) {
	s, _ := newStore(t)
	t0 := time.Now()
	a := acquire(t, s, "replica-a", 10*time.Second)
	time.Sleep(2 * time.Second)
	c, err := Acquire(s, "leases/reports", "replica-c", 10*time.Second)
	if err != nil {
		t.Fatalf("Acquire of another key (leases/reports) while replica-a holds %s = %v, want nil: each key is its own lease", key, err)
	}
	if a.MayAct(t0.Add(7500 * time.Millisecond)) {
		t.Fatal("replica-a acquired at t0 (10 s TTL); after replica-c acquired another key at t0+2s, replica-a's MayAct(t0+7.5s) = true, want false: another lease's write does not move replica-a's window")
	}
	time.Sleep(2 * time.Second)
	if err := c.Renew(); err != nil {
		t.Fatalf("replica-c's Renew of its own lease on leases/reports = %v, want nil", err)
	}
	if err := a.Renew(); err != nil {
		t.Fatalf("replica-a's Renew 4 s into its 10 s lease, after another lease on another key was acquired and renewed = %v, want nil: compare with the version of this lease's own last write, not the store's latest version", err)
	}
	if err := a.Renew(); err != nil {
		t.Fatalf("replica-a's second Renew at the same instant = %v, want nil: each renewal is a write, and the next one compares with its version", err)
	}
	if err := c.Renew(); err != nil {
		t.Fatalf("replica-c's Renew after replica-a renewed twice = %v, want nil", err)
	}
	if !a.MayAct(t0.Add(11*time.Second)) || a.MayAct(t0.Add(11500*time.Millisecond)) {
		t.Fatal("replica-a renewed at t0+4s: its window must end at exactly t0+11.5s (true at t0+11s, false at t0+11.5s), whatever other leases do")
	}
}

func TestStep2_RenewChecksOwnerAndVersion(t *testing.T) {
	t.Run("another replica took over", func(t *testing.T) {
		bubble(t, func(t *testing.T) {
			s, _ := newStore(t)
			a := acquire(t, s, "replica-a", 10*time.Second)
			time.Sleep(15 * time.Second) // replica-a stalls past its TTL
			acquire(t, s, "replica-b", 10*time.Second)
			b, _ := s.Get(key)
			wantLost(t, a.Renew(), "replica-a's Renew after its lease expired and replica-b took the key", "the key is replica-b's now")
			if now, _ := s.Get(key); now != b {
				t.Fatalf("replica-a's failed Renew changed the key from %+v to %+v; a renewal that is not yours must write nothing", b, now)
			}
		})
	})
	t.Run("the lease expired and nobody took it", func(t *testing.T) {
		bubble(t, func(t *testing.T) {
			s, _ := newStore(t)
			a := acquire(t, s, "replica-a", 10*time.Second)
			time.Sleep(15 * time.Second)
			wantLost(t, a.Renew(), "Renew 15 s into a 10 s lease that nobody renewed", "for 5 s nobody owned it and someone may have acted; a renewal must not bring it back")
			if got := holder(s); got != "" {
				t.Fatalf("a failed Renew re-created the key for %q; an expired lease is over, re-acquiring it is a new lease with a new version", got)
			}
			if err := a.Renew(); !errors.Is(err, ErrLost) {
				t.Fatalf("a second Renew after the lease was lost = %v, want ErrLost: a lost lease stays lost", err)
			}
			if got := holder(s); got != "" {
				t.Fatalf("a second Renew of a lost lease re-created the key for %q", got)
			}
		})
	})
	t.Run("same owner name, later version", func(t *testing.T) {
		// The scheduler pod is restarted under the same name while the old
		// process is paused: the new one's lease must not be renewed (or
		// shortened) by the old one.
		bubble(t, func(t *testing.T) {
			s, _ := newStore(t)
			old := acquire(t, s, "scheduler-0", 10*time.Second)
			time.Sleep(15 * time.Second)
			acquire(t, s, "scheduler-0", 10*time.Second)
			fresh, _ := s.Get(key)
			wantLost(t, old.Renew(), "the old process's Renew after a new process with the same name acquired the lease",
				"the owner name matches but the version does not; compare the version of your last write, not only the owner")
			if now, _ := s.Get(key); now != fresh {
				t.Fatalf("the old process's Renew rewrote the new holder's key (%+v -> %+v)", fresh, now)
			}
		})
	})
	t.Run("the lease changes hands in the middle of your Renew", func(t *testing.T) {
		// The old process pauses past its TTL right after each of Renew's
		// requests in turn, and a new process with the same name acquires
		// the lease in that gap. The new process's key must be left alone.
		for k := 1; k <= 6; k++ {
			done := false
			bubble(t, func(t *testing.T) {
				s, p := newStore(t)
				old := acquire(t, s, "scheduler-0", 10*time.Second)
				time.Sleep(5 * time.Second)
				n, fired := 0, ""
				var fresh kv.Entry
				p.watch(func(op kv.Op) {
					if n++; n != k {
						return
					}
					fired = describe(op)
					p.quiet(func() {
						time.Sleep(15 * time.Second) // a GC pause; the lease expires
						if _, err := Acquire(s, key, "scheduler-0", 10*time.Second); err == nil {
							fresh, _ = s.Get(key)
						}
					})
				})
				old.Renew()
				p.watch(nil)
				if fired == "" {
					done = true // Renew sent fewer than k requests: every gap was tried
					return
				}
				if now, _ := s.Get(key); fresh.Version != 0 && now != fresh {
					t.Fatalf("right after Renew's request number %d (%s), the old process paused 15 s, its 10 s lease expired and a new process with the same name acquired it (%+v); when Renew went on it rewrote that key (%+v). Check and renew in one request: Update with your value and version", k, fired, fresh, now)
				}
			})
			if done || t.Failed() {
				break
			}
		}
	})
}

// renewals records when owner's writes succeeded.
func renewals(p *probe, owner string) func() []time.Time {
	var mu sync.Mutex
	var at []time.Time
	p.watch(func(op kv.Op) {
		if op.Kind != kv.OpGet && op.Value == owner && op.OK {
			mu.Lock()
			at = append(at, op.At)
			mu.Unlock()
		}
	})
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), at...)
	}
}

func TestStep3_RenewsEveryHalfTTL(t *testing.T) {
	t.Run("a 10 s lease for a minute", renewsEveryHalfTTL)
	t.Run("the shortest TTL, 1 ns", shortestTTL)
	t.Run("a context deadline ends Run", deadlineEndsRun)
	t.Run("the end of Run takes nothing from a new holder", endTakesNothing)
}

// deadlineEndsRun checks that Run returns ctx.Err() whatever ended the
// context: a deadline gives context.DeadlineExceeded, not Canceled.
func deadlineEndsRun(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, p := newStore(t)
		a := acquire(t, s, "replica-a", 10*time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 12*time.Second)
		defer cancel()
		start := time.Now()
		r := startRun(t, p, ctx, a, 10*time.Second, func() {
			t.Error("onLost was called although the lease was healthy until the context's deadline")
		})
		if !r.within(time.Minute) {
			t.Fatal("Run was still running a minute after its context's 12 s deadline: wait on ctx.Done() too")
		}
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("Run whose context reached its deadline returned %v, want context.DeadlineExceeded: return ctx.Err(), which says why the context ended (Canceled only when it was cancelled)", r.err)
		}
		if d := r.at.Sub(start); d != 12*time.Second {
			t.Errorf("Run returned %v after it started, want 12s: at the context's deadline", d)
		}
		if a.MayAct(time.Now()) && holder(s) == "" {
			t.Error("Run gave the lease back when its context ended, but MayAct(now) is still true: once the key is gone no worker may act on it")
		}
	})
}

// endTakesNothing: the lease is taken from replica-a between two of its
// renewals (an operator deletes the key, replica-b acquires it), and
// replica-a's Run is stopped before its next renewal could notice. A Run
// that gives the lease back must do so only if the key is still its own.
func endTakesNothing(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, p := newStore(t)
		a := acquire(t, s, "replica-a", 10*time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		r := startRun(t, p, ctx, a, 10*time.Second, func() {})
		time.Sleep(6 * time.Second) // after the renewal at 5 s
		s.Delete(key)
		acquire(t, s, "replica-b", 10*time.Second)
		time.Sleep(time.Second)
		cancel()
		if !r.within(time.Second) {
			t.Fatal("Run did not return within 1 s of its context being cancelled")
		}
		if got := holder(s); got != "replica-b" {
			t.Fatalf("replica-a's Run was cancelled 1 s after replica-b took the lease over; the key now holds %q, want replica-b: giving the lease back when Run ends must be a compare-and-delete with your value and version, never a plain Delete", got)
		}
	})
}

func renewsEveryHalfTTL(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, p := newStore(t)
		a := acquire(t, s, "replica-a", 10*time.Second)
		got := renewals(p, "replica-a")
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		var (
			callsMu sync.Mutex
			calls   int
		)
		r := startRun(t, p, ctx, a, 10*time.Second, func() {
			callsMu.Lock()
			calls++
			callsMu.Unlock()
		})
		// Workers ask MayAct every second while Run renews: both sides must
		// hold l.mu (go test -race reports it otherwise).
		stopAsking := make(chan struct{})
		asked := make(chan struct{})
		go func() {
			defer close(asked)
			for {
				select {
				case <-stopAsking:
					return
				case <-time.After(time.Second):
					a.MayAct(time.Now())
				}
			}
		}()
		time.Sleep(61 * time.Second)
		close(stopAsking)
		<-asked
		if got := holder(s); got != "replica-a" {
			t.Fatalf("after a minute of Run on a 10 s lease the key holds %q, want replica-a: the renewals did not keep the lease alive", got)
		}
		times := got()
		cancel()
		if !r.within(time.Second) {
			t.Fatal("Run did not return within 1 s of its context being cancelled: while it waits for the next renewal it must also wait on ctx.Done() (a select with the ticker, not a time.Sleep), so the owner can shut it down at once")
		}
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("Run after its context was cancelled returned %v, want context.Canceled (ctx.Err())", r.err)
		}
		callsMu.Lock()
		n := calls
		callsMu.Unlock()
		if n != 0 {
			t.Errorf("onLost was called %d times while the lease was healthy (or after its context was cancelled); it means \"you lost the lease\", nothing else", n)
		}
		if len(times) != 12 {
			t.Fatalf("in 61 s of a 10 s lease Run renewed %d times, want 12 (every 5 s, TTL/2, starting 5 s after Run starts)", len(times))
		}
		for i, at := range times {
			if want := time.Duration(i+1) * 5 * time.Second; at.Sub(start) != want {
				t.Fatalf("renewal %d happened %v after Run started, want %v (every TTL/2)", i+1, at.Sub(start), want)
			}
		}
	})
}

// shortestTTL runs a lease of 1 ns, the shortest TTL Acquire accepts: TTL/2
// rounds down to 0, where a ticker panics and a timer of 0 renews without
// ever waiting. The lease expires before any renewal can reach the store,
// so Run must report it lost.
func shortestTTL(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, p := newStore(t)
		a, err := Acquire(s, key, "replica-a", time.Nanosecond)
		if err != nil || a == nil {
			t.Fatalf("Acquire with a TTL of 1 ns = %v, want a lease: the rule is a TTL that is positive, and 1 ns is", err)
		}
		var (
			mu    sync.Mutex
			calls int
		)
		r := startRun(t, p, t.Context(), a, time.Nanosecond, func() {
			mu.Lock()
			calls++
			mu.Unlock()
		})
		if !r.within(time.Second) {
			t.Fatal("Run on a 1 ns lease was still running 1 s later: the key expires at 1 ns, so the first renewal (at least 1 ns after the start) must fail and end Run with ErrLost")
		}
		if t.Failed() {
			return // Run panicked or never waited: said above
		}
		if !errors.Is(r.err, ErrLost) {
			t.Errorf("Run on a 1 ns lease returned %v, want an error wrapping ErrLost: the lease expired before its first renewal", r.err)
		}
		mu.Lock()
		n := calls
		mu.Unlock()
		if n != 1 {
			t.Errorf("Run on a 1 ns lease called onLost %d times, want once: the lease expired before its first renewal", n)
		}
	})
}

func TestStep4_StopsOnLoss(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, p := newStore(t)
		a := acquire(t, s, "replica-a", 10*time.Second)
		var (
			mu       sync.Mutex
			lostAt   []time.Time
			attempts int
		)
		p.watch(func(op kv.Op) {
			if op.Kind != kv.OpGet && op.Value == "replica-a" {
				mu.Lock()
				attempts++
				mu.Unlock()
			}
		})
		start := time.Now()
		r := startRun(t, p, t.Context(), a, 10*time.Second, func() {
			mu.Lock()
			lostAt = append(lostAt, time.Now())
			mu.Unlock()
		})
		time.Sleep(7 * time.Second)
		// An operator deletes the key and replica-b takes the lease.
		s.Delete(key)
		acquire(t, s, "replica-b", 10*time.Second)
		if !r.within(time.Minute) {
			t.Fatal("Run kept going for a minute after its lease was taken at 7 s: the renewal at 10 s fails, and a failed renewal must end Run")
		}
		// At the instant of the loss (10 s) the last good renewal was at
		// 5 s, so the 0.75 x TTL window runs until 12.5 s: only the loss
		// itself can make MayAct false now.
		if a.MayAct(time.Now()) {
			t.Errorf("MayAct(now) is true right after the renewal at %v failed; the time window is still open (last renewal at 5s), but a lost lease must never allow work again", r.at.Sub(start))
		}
		if got := holder(s); got != "replica-b" {
			t.Errorf("the key holds %q, want replica-b: a failed renewal must not touch the new holder's key", got)
		}
		mu.Lock()
		calls, before := append([]time.Time(nil), lostAt...), attempts
		mu.Unlock()
		if len(calls) != 1 {
			t.Fatalf("onLost was called %d times, want exactly once: it is how the owner learns to stop working, and a second call would stop it twice", len(calls))
		}
		if d := calls[0].Sub(start); d != 10*time.Second {
			t.Errorf("onLost was called %v after Run started, want 10s: at the first renewal after the loss, not later", d)
		}
		if !errors.Is(r.err, ErrLost) {
			t.Errorf("Run returned %v after the loss, want an error wrapping ErrLost", r.err)
		}
		time.Sleep(time.Minute)
		mu.Lock()
		after := attempts
		mu.Unlock()
		if after != before {
			t.Errorf("replica-a sent %d more writes after it lost the lease; a lost lease is over for good", after-before)
		}
		if a.MayAct(time.Now()) {
			t.Error("MayAct is true a minute after the lease was lost")
		}
	})
}

func TestStep5_MayActBeforeThreeQuartersTTL(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, _ := newStore(t)
		t0 := time.Now()
		a := acquire(t, s, "replica-a", 10*time.Second)
		checks := []struct {
			at   time.Duration
			want bool
		}{{0, true}, {7499 * time.Millisecond, true}, {7500 * time.Millisecond, false}, {9 * time.Second, false}, {time.Hour, false}}
		for _, c := range checks {
			if got := a.MayAct(t0.Add(c.at)); got != c.want {
				t.Fatalf("lease acquired at t0 with a 10 s TTL: MayAct(t0+%v) = %v, want %v (true only before t0 + 0.75 x TTL = t0+7.5s; answer for the time passed in, not time.Now())", c.at, got, c.want)
			}
		}
		time.Sleep(5 * time.Second)
		if err := a.Renew(); err != nil {
			t.Fatalf("Renew 5 s into a 10 s lease = %v, want nil", err)
		}
		t1 := time.Now()
		if !a.MayAct(t1.Add(7 * time.Second)) {
			t.Fatal("renewed at t1: MayAct(t1+7s) = false, want true: the window starts again at each successful renewal")
		}
		if a.MayAct(t1.Add(7500 * time.Millisecond)) {
			t.Fatal("renewed at t1: MayAct(t1+7.5s) = true, want false: the window ends at 0.75 x TTL after the renewal, and that instant is already outside")
		}
		// One second later an operator hands the lease to replica-b, and
		// the next Renew fails while the window (until t1+7.5s) is open.
		time.Sleep(time.Second)
		s.Delete(key)
		acquire(t, s, "replica-b", 10*time.Second)
		a.Renew()
		if a.MayAct(time.Now()) {
			t.Fatal("renewed at t1, Renew failed at t1+1s: MayAct(t1+1s) = true, want false: the window is still open, but after a failed renewal the lease is lost and never allows work again")
		}
		if a.MayAct(t1) {
			t.Fatal("after a failed renewal MayAct(t1) = true for an instant inside the old window; a lost lease allows no work at any time")
		}
	})
	// The window counts from when a request was sent: the store starts the
	// TTL somewhere between the request and its reply, so the earlier
	// instant is the safe one. Here every reply to replica-a's writes
	// comes 1 s after the store applied them (a slow network).
	bubble(t, func(t *testing.T) {
		s, p := newStore(t)
		p.watch(func(op kv.Op) {
			if op.Kind != kv.OpGet && op.Value == "replica-a" && op.OK {
				time.Sleep(time.Second)
			}
		})
		sent := time.Now()
		a := acquire(t, s, "replica-a", 10*time.Second)
		if a.MayAct(sent.Add(7500 * time.Millisecond)) {
			t.Fatal("Acquire sent its request at t0 and its reply came 1 s later: MayAct(t0+7.5s) = true, want false. The store may have started the TTL as early as t0, so the window ends at t0 + 0.75 x TTL: read the clock just before the request, not after the reply")
		}
		time.Sleep(4 * time.Second)
		sent = time.Now()
		if err := a.Renew(); err != nil {
			t.Fatalf("Renew 5 s into a 10 s lease = %v, want nil", err)
		}
		if a.MayAct(sent.Add(7500 * time.Millisecond)) {
			t.Fatal("Renew sent its request at t1 and its reply came 1 s later: MayAct(t1+7.5s) = true, want false. The store may have started the fresh TTL as early as t1, so the window ends at t1 + 0.75 x TTL: read the clock just before the request, not after the reply")
		}
		if !a.MayAct(sent.Add(7499 * time.Millisecond)) {
			t.Fatal("renewed at t1 (reply 1 s later): MayAct(t1+7.499s) = false, want true: the window restarts at the renewal")
		}
	})
}

func TestStep6_PolicyValidate(t *testing.T) {
	s := time.Second
	cases := []struct {
		p   LeasePolicy
		ok  bool
		why string
	}{
		{LeasePolicy{30 * s, 10 * s, 10 * s}, true, "2x10 + 10 = 30 fits a 30 s TTL exactly, and the rule allows equality"},
		{LeasePolicy{30 * s, 10 * s, 12 * s}, false, "2x10 + 12 = 32 is more than 30"},
		{LeasePolicy{15 * s, 5 * s, 4 * s}, true, "2x5 + 4 = 14 fits 15"},
		{LeasePolicy{10 * s, 5 * s, 1 * s}, false, "renewing at TTL/2 leaves no room for any pause: 2x5 + 1 = 11"},
		{LeasePolicy{12 * s, 5 * s, 0}, true, "no pause budget: 2x5 = 10 fits 12"},
		{LeasePolicy{12 * s, 7 * s, 0}, false, "2x7 = 14 is more than 12 even without pauses"},
		{LeasePolicy{0, 0, 0}, false, "a zero TTL"},
		{LeasePolicy{10 * s, 0, 1 * s}, false, "a zero renewal interval"},
		{LeasePolicy{10 * s, -2 * s, 1 * s}, false, "a negative renewal interval (2x-2 + 1 is less than 10, but it is still nonsense)"},
		{LeasePolicy{10 * s, 2 * s, -1 * s}, false, "a negative pause budget"},
	}
	for _, c := range cases {
		err := c.p.Validate()
		switch {
		case c.ok && err != nil:
			t.Errorf("Validate(TTL %v, renew every %v, pause %v) = %v, want nil: %s", c.p.TTL, c.p.RenewEvery, c.p.PauseBudget, err, c.why)
		case !c.ok && !errors.Is(err, ErrBadPolicy):
			t.Errorf("Validate(TTL %v, renew every %v, pause %v) = %v, want an error wrapping ErrBadPolicy: %s", c.p.TTL, c.p.RenewEvery, c.p.PauseBudget, err, c.why)
		}
	}
}
