package lease

// Grader for lab 03. Each TestStepK checks one step of README.md.
//
// Wrong solutions these tests defend against (each fails at least one test;
// [mutant] ones are kept in solutions/03_lease/testdata/mutants and checked
// by `go run ./internal/tools/labcheck`):
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
//   - a lease that still says MayAct after it was lost: Step 5.
//   - Validate with < instead of <= (rejects a policy that fits exactly)
//     [mutant validate_strict.patch], or one that forgets the factor 2: Step 6.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownership-election/playground/labs/kv"
)

const key = "leases/scheduler"

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

func TestStep1_AcquireAndRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		a := acquire(t, s, "replica-a", 10*time.Second)
		if got := holder(s); got != "replica-a" {
			t.Fatalf("after Acquire the key holds %q, want %q", got, "replica-a")
		}
		if _, err := Acquire(s, key, "replica-b", 10*time.Second); !errors.Is(err, ErrHeld) {
			t.Fatalf("Acquire of a held lease = %v, want ErrHeld", err)
		}
		first, _ := s.Get(key)
		time.Sleep(8 * time.Second)
		if err := a.Renew(); err != nil {
			t.Fatalf("Renew 8 s into a 10 s lease = %v, want nil", err)
		}
		renewed, _ := s.Get(key)
		if renewed.Value != "replica-a" || renewed.Version <= first.Version {
			t.Fatalf("after Renew the key is %+v; want the same owner with a newer version than %d", renewed, first.Version)
		}
		time.Sleep(8 * time.Second) // 16 s after Acquire, 8 s after Renew
		if got := holder(s); got != "replica-a" {
			t.Fatal("the lease expired 10 s after Acquire although it was renewed at 8 s: Renew must write a fresh TTL")
		}
		time.Sleep(2 * time.Second)
		if got := holder(s); got != "" {
			t.Fatalf("10 s after the last renewal the key still holds %q", got)
		}
	})
}

func TestStep2_RenewChecksOwnerAndVersion(t *testing.T) {
	t.Run("another replica took over", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			a := acquire(t, s, "replica-a", 10*time.Second)
			time.Sleep(15 * time.Second) // replica-a stalls past its TTL
			acquire(t, s, "replica-b", 10*time.Second)
			b, _ := s.Get(key)
			if err := a.Renew(); !errors.Is(err, ErrLost) {
				t.Fatalf("replica-a's late Renew = %v, want ErrLost", err)
			}
			if now, _ := s.Get(key); now != b {
				t.Fatalf("replica-a's failed Renew changed the key from %+v to %+v", b, now)
			}
		})
	})
	t.Run("the lease expired and nobody took it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			a := acquire(t, s, "replica-a", 10*time.Second)
			time.Sleep(15 * time.Second)
			if err := a.Renew(); !errors.Is(err, ErrLost) {
				t.Fatalf("Renew of an expired lease = %v, want ErrLost: for 5 s nobody owned it and someone may have acted; a renewal must not bring it back", err)
			}
			if got := holder(s); got != "" {
				t.Fatalf("a failed Renew re-created the key for %q", got)
			}
		})
	})
	t.Run("same owner name, later version", func(t *testing.T) {
		// The scheduler pod is restarted under the same name while the old
		// process is paused: the new one's lease must not be renewed (or
		// shortened) by the old one.
		synctest.Test(t, func(t *testing.T) {
			s := kv.New()
			old := acquire(t, s, "scheduler-0", 10*time.Second)
			time.Sleep(15 * time.Second)
			acquire(t, s, "scheduler-0", 10*time.Second)
			fresh, _ := s.Get(key)
			if err := old.Renew(); !errors.Is(err, ErrLost) {
				t.Fatalf("the old process's Renew = %v, want ErrLost: compare the version of your last write, not only the owner", err)
			}
			if now, _ := s.Get(key); now != fresh {
				t.Fatalf("the old process's Renew rewrote the new holder's key (%+v -> %+v)", fresh, now)
			}
		})
	})
}

// renewals records when owner's renewals succeeded.
func renewals(s *kv.Store, owner string) func() []time.Time {
	var mu sync.Mutex
	var at []time.Time
	s.SetHook(func(op kv.Op) {
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
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		a := acquire(t, s, "replica-a", 10*time.Second)
		got := renewals(s, "replica-a")
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		lost := 0
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx, func() { lost++ }) }()
		time.Sleep(61 * time.Second)
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Second):
			t.Fatal("Run did not return within 1 s of its context being cancelled")
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after cancel returned %v, want context.Canceled", err)
		}
		if lost != 0 {
			t.Errorf("onLost was called %d times while the lease was healthy", lost)
		}
		times := got()
		if len(times) != 12 {
			t.Fatalf("in 61 s of a 10 s lease Run renewed %d times, want 12 (every 5 s, TTL/2)", len(times))
		}
		for i, at := range times {
			if want := time.Duration(i+1) * 5 * time.Second; at.Sub(start) != want {
				t.Fatalf("renewal %d happened %v after Run started, want %v (every TTL/2)", i+1, at.Sub(start), want)
			}
		}
		if got := holder(s); got != "replica-a" {
			t.Fatalf("after a minute of renewals the key holds %q", got)
		}
	})
}

func TestStep4_StopsOnLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		a := acquire(t, s, "replica-a", 10*time.Second)
		var (
			mu       sync.Mutex
			lostAt   []time.Time
			attempts int
		)
		s.SetHook(func(op kv.Op) {
			if op.Kind != kv.OpGet && op.Value == "replica-a" {
				mu.Lock()
				attempts++
				mu.Unlock()
			}
		})
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			done <- a.Run(t.Context(), func() {
				mu.Lock()
				lostAt = append(lostAt, time.Now())
				mu.Unlock()
			})
		}()
		time.Sleep(7 * time.Second)
		// An operator deletes the key and replica-b takes the lease.
		s.Delete(key)
		acquire(t, s, "replica-b", 10*time.Second)
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatal("Run kept going for a minute after its lease was taken: a failed renewal must end it")
		}
		if got := holder(s); got != "replica-b" {
			t.Errorf("the key holds %q, want replica-b: a failed renewal must not touch the new holder's key", got)
		}
		mu.Lock()
		calls, before := append([]time.Time(nil), lostAt...), attempts
		mu.Unlock()
		if len(calls) != 1 {
			t.Fatalf("onLost was called %d times, want exactly once", len(calls))
		}
		if d := calls[0].Sub(start); d != 10*time.Second {
			t.Errorf("onLost was called %v after Run started, want 10s: at the first renewal after the loss", d)
		}
		if !errors.Is(err, ErrLost) {
			t.Errorf("Run returned %v after the loss, want ErrLost", err)
		}
		time.Sleep(time.Minute)
		mu.Lock()
		after := attempts
		mu.Unlock()
		if after != before {
			t.Errorf("replica-a sent %d more writes after it lost the lease", after-before)
		}
		if a.MayAct(time.Now()) {
			t.Error("MayAct is true after the lease was lost")
		}
	})
}

func TestStep5_MayActBeforeThreeQuartersTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := kv.New()
		t0 := time.Now()
		a := acquire(t, s, "replica-a", 10*time.Second)
		checks := []struct {
			at   time.Duration
			want bool
		}{{0, true}, {7499 * time.Millisecond, true}, {7500 * time.Millisecond, false}, {9 * time.Second, false}, {time.Hour, false}}
		for _, c := range checks {
			if got := a.MayAct(t0.Add(c.at)); got != c.want {
				t.Fatalf("lease acquired at t0 with a 10 s TTL: MayAct(t0+%v) = %v, want %v (true only before t0 + 0.75 x TTL = t0+7.5s)", c.at, got, c.want)
			}
		}
		time.Sleep(5 * time.Second)
		if err := a.Renew(); err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		if !a.MayAct(t1.Add(7 * time.Second)) {
			t.Fatal("renewed at t1: MayAct(t1+7s) = false, want true: the window starts again at each successful renewal")
		}
		if a.MayAct(t1.Add(7500 * time.Millisecond)) {
			t.Fatal("renewed at t1: MayAct(t1+7.5s) = true, want false")
		}
		time.Sleep(15 * time.Second)
		acquire(t, s, "replica-b", 10*time.Second)
		a.Renew()
		if a.MayAct(time.Now()) {
			t.Fatal("after a failed renewal MayAct(now) = true; a lost lease never allows work again")
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
		{LeasePolicy{30 * s, 10 * s, 10 * s}, true, "2x10 + 10 = 30 fits a 30 s TTL exactly"},
		{LeasePolicy{30 * s, 10 * s, 12 * s}, false, "2x10 + 12 = 32 is more than 30"},
		{LeasePolicy{15 * s, 5 * s, 4 * s}, true, "2x5 + 4 = 14 fits 15"},
		{LeasePolicy{10 * s, 5 * s, 1 * s}, false, "renewing at TTL/2 leaves no room for any pause: 2x5 + 1 = 11"},
		{LeasePolicy{12 * s, 5 * s, 0}, true, "no pause budget: 2x5 = 10 fits 12"},
		{LeasePolicy{12 * s, 7 * s, 0}, false, "2x7 = 14 is more than 12 even without pauses"},
		{LeasePolicy{0, 0, 0}, false, "a zero TTL"},
		{LeasePolicy{10 * s, 0, 1 * s}, false, "a zero renewal interval"},
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
