package etcdlock

// Grader for lab 05. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness).
//
// Wrong solutions these tests defend against (the ones marked [mutant] are
// kept in solutions/05_etcd_lock/testdata/mutants and run by labcheck):
//   - Get to see whether the key is free, then Put [mutant
//     get_then_put.patch]: Step 2 holds every contender between its Get and
//     its Put, so all fifty read "free" and all fifty win.
//   - a put without the lease, so the lock never expires: Steps 1 and 3.
//   - returning the lease ID, or the revision of a failed attempt, as the
//     token [mutant lease_as_token.patch]: Step 1 (the token must be the
//     key's CreateRevision).
//   - plain Delete on release [mutant plain_delete.patch], or a release that
//     only checks the key exists: Step 3 (the stale owner deletes the new
//     owner's lock).
//   - a release that reports success when nothing was deleted: Step 3.

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs/internal/etcdharness"
)

func TestMain(m *testing.M) { os.Exit(etcdharness.Main(m)) }

func TestStep1_AcquireOnce(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cli := env.Client()
	key := env.Key("lock")
	la, lb := env.Grant(30), env.Grant(30)

	token, err := Acquire(env.Ctx, cli, key, "replica-a", la)
	if err != nil {
		t.Fatalf("Acquire on a free lock: %v", err)
	}
	kv, ok := env.Get(key)
	if !ok {
		t.Fatalf("Acquire returned token %d but %s does not exist in etcd", token, key)
	}
	if kv.Value != "replica-a" {
		t.Errorf("the lock key holds %q, want the owner %q", kv.Value, "replica-a")
	}
	if kv.Lease != la {
		t.Errorf("the lock key is attached to lease %x, want %x: without the lease it never expires", int64(kv.Lease), int64(la))
	}
	if token != kv.CreateRevision {
		t.Errorf("token = %d, want the key's CreateRevision %d (a lease ID is unique but not ordered)", token, kv.CreateRevision)
	}

	t2, err := Acquire(env.Ctx, cli, key, "replica-b", lb)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire on a held lock = (%d, %v), want ErrLocked", t2, err)
	}
	after, _ := env.Get(key)
	if after != kv {
		t.Fatalf("a losing Acquire changed the key from %+v to %+v", kv, after)
	}
}

func TestStep2_FiftyContendersOneWinner(t *testing.T) {
	t.Parallel()
	const n = 50
	env := etcdharness.New(t)
	cli := env.Client()
	spy := etcdharness.Attach(cli)
	key := env.Key("lock")

	// A read-then-write solution is only wrong if the reads happen before
	// the writes. Hold every Get until each contender has either made one
	// or finished, so that this interleaving always happens instead of by
	// luck. A single-transaction solution makes no Get and never waits.
	gate := newBarrier(n)
	spy.BeforeGet(func(string) { gate.arrive() })

	leases := make([]clientv3.LeaseID, n)
	for i := range leases {
		leases[i] = env.Grant(30)
	}
	type result struct {
		owner string
		token int64
		err   error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer gate.leave()
			owner := fmt.Sprintf("replica-%02d", i)
			tok, err := Acquire(env.Ctx, cli, key, owner, leases[i])
			results[i] = result{owner, tok, err}
		})
	}
	wg.Wait()

	var winners, odd []result
	for _, r := range results {
		switch {
		case r.err == nil:
			winners = append(winners, r)
		case !errors.Is(r.err, ErrLocked):
			odd = append(odd, r)
		}
	}
	if len(odd) > 0 {
		t.Errorf("%d contenders failed with an error other than ErrLocked, the first: %s: %v", len(odd), odd[0].owner, odd[0].err)
	}
	if len(winners) != 1 {
		names := make([]string, 0, 3)
		for _, w := range winners[:min(3, len(winners))] {
			names = append(names, fmt.Sprintf("%s (token %d)", w.owner, w.token))
		}
		t.Fatalf("%d of %d contenders won the lock, want exactly 1; winners include %v", len(winners), n, names)
	}
	kv, ok := env.Get(key)
	if !ok || kv.Value != winners[0].owner || kv.CreateRevision != winners[0].token {
		t.Fatalf("winner %s got token %d but the key is %+v", winners[0].owner, winners[0].token, kv)
	}
}

func TestStep3_ReleaseOnlyYourOwnLock(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cli := env.Client()

	t.Run("owner releases", func(t *testing.T) {
		env := env.Sub(t)
		key := env.Key("lock-1")
		tok, err := Acquire(env.Ctx, cli, key, "replica-a", env.Grant(30))
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		if err := Release(env.Ctx, cli, key, tok); err != nil {
			t.Fatalf("Release by the owner: %v", err)
		}
		if kv, ok := env.Get(key); ok {
			t.Fatalf("after Release the key still exists: %+v", kv)
		}
		if err := Release(env.Ctx, cli, key, tok); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("a second Release = %v, want ErrNotOwner", err)
		}
	})

	t.Run("stale owner after expiry", func(t *testing.T) {
		env := env.Sub(t)
		key := env.Key("lock-2")
		la := env.Grant(30)
		tokA, err := Acquire(env.Ctx, cli, key, "replica-a", la)
		if err != nil {
			t.Fatalf("A: Acquire: %v", err)
		}
		// A stalls; its lease runs out (forced here with Revoke).
		env.Revoke(la)
		if _, ok := env.Get(key); ok {
			t.Fatal("the lock survived the revoke of its lease: was it put WithLease?")
		}
		tokB, err := Acquire(env.Ctx, cli, key, "replica-b", env.Grant(30))
		if err != nil {
			t.Fatalf("B: Acquire after A's lease expired: %v", err)
		}
		if tokB <= tokA {
			t.Fatalf("B's token %d is not above A's %d", tokB, tokA)
		}
		// A wakes up and releases "its" lock.
		if err := Release(env.Ctx, cli, key, tokA); !errors.Is(err, ErrNotOwner) {
			t.Errorf("A's stale Release = %v, want ErrNotOwner", err)
		}
		kv, ok := env.Get(key)
		if !ok || kv.Value != "replica-b" || kv.CreateRevision != tokB {
			t.Fatalf("after A's stale Release the lock is %+v (exists=%v), want B's lock (token %d) untouched", kv, ok, tokB)
		}
		if err := Release(env.Ctx, cli, key, tokB); err != nil {
			t.Fatalf("B's Release: %v", err)
		}
		if _, ok := env.Get(key); ok {
			t.Fatal("B's Release left the key in place")
		}
	})
}

// barrier holds callers of arrive until every one of n participants has
// either arrived or left; after that it never blocks again.
type barrier struct {
	mu      sync.Mutex
	n, seen int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) count() {
	b.seen++
	if b.seen == b.n {
		close(b.open)
	}
}

func (b *barrier) arrive() {
	b.mu.Lock()
	select {
	case <-b.open:
		b.mu.Unlock()
		return
	default:
	}
	b.count()
	b.mu.Unlock()
	<-b.open
}

func (b *barrier) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.open:
	default:
		b.count()
	}
}
