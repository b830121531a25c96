package etcdlock

// Grader for lab 7.1. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness).
//
// Wrong solutions these tests defend against (mutants and learner bugs
// are kept in solutions/05_etcd_lock/testdata and run by labcheck):
//   - Get to see whether the key is free, then Put: Step 2 holds every
//     contender between its Get and its Put, so all fifty read "free" and
//     all fifty win; and it lets a competitor in between every two
//     requests an Acquire sends.
//   - a put without the lease, so the lock never expires: Steps 1 and 3.
//   - returning the lease ID, the revision of a failed attempt, or a
//     CreateRevision read back after the transaction, as the token: Steps
//     1 and 2 (the token must be the revision of this Acquire's own write).
//   - a lock that lets its owner in again (same name, new lease): Step 1.
//   - an Acquire that waits for the lock instead of trying once, or that
//     reports a failed request (cancelled, lease gone) as ErrLocked: Step 1.
//   - a release that deletes with a prefix (other locks whose keys start
//     with the same letters go too): Step 3.
//   - plain Delete on release, a release that only checks the key exists,
//     compares ModRevision, or reads the key and then deletes it: Step 3
//     (the stale owner deletes the new owner's lock, with a competitor in
//     every gap between the release's requests).
//   - a release that reports success when nothing was deleted, or for
//     token 0: Step 3.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

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
	if env.Expired(err) {
		t.Fatalf("Acquire on a free lock blocked until the test's deadline: it should send one transaction and return")
	}
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

	// Someone else tries: ErrLocked at once (Acquire tries once, it does
	// not wait for the lock), and nothing changes.
	ctx, cancel := context.WithTimeout(env.Ctx, 2*time.Second)
	t2, err := Acquire(ctx, cli, key, "replica-b", lb)
	waited := ctx.Err() != nil
	cancel()
	if waited {
		t.Fatalf("Acquire on a held lock returned (%d, %v) only when its 2 s context ran out: it must try once and return ErrLocked at once, not wait for the lock", t2, err)
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire on a held lock = (%d, %v), want ErrLocked", t2, err)
	}
	after, _ := env.Get(key)
	if after != kv {
		t.Fatalf("a losing Acquire changed the key from %+v to %+v", kv, after)
	}

	// The same owner again, on a new lease (a restarted replica-a) or on
	// its own lease: still one lock, one holder. A lock that lets its
	// owner's name back in hands one lock to two processes.
	for _, again := range []struct {
		what  string
		lease clientv3.LeaseID
	}{{"on a new lease", env.Grant(30)}, {"on the holder's own lease", la}} {
		tok, err := Acquire(env.Ctx, cli, key, "replica-a", again.lease)
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("Acquire by the same owner name %s while the lock is held = (%d, %v), want ErrLocked: a name is not an identity, the key's CreateRevision is", again.what, tok, err)
		}
	}
	if after, _ := env.Get(key); after != kv {
		t.Fatalf("a second Acquire by the same owner changed the key from %+v to %+v", kv, after)
	}

	// Requests that fail are errors, not "locked".
	gone := env.Grant(30)
	env.Revoke(gone)
	free := env.Key("free")
	if tok, err := Acquire(env.Ctx, cli, free, "replica-c", gone); err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire with a lease that no longer exists = (%d, %v), want etcd's error (wrapped): the lock is free, etcd refused the lease", tok, err)
	}
	if kv, ok := env.Get(free); ok {
		t.Fatalf("Acquire with a dead lease left a key behind: %+v", kv)
	}
	cctx, ccancel := context.WithCancel(env.Ctx)
	ccancel()
	if tok, err := Acquire(cctx, cli, free, "replica-c", lb); !errors.Is(err, context.Canceled) || errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire with a cancelled context = (%d, %v), want an error wrapping context.Canceled and not ErrLocked: \"could not ask\" is not \"someone holds it\"", tok, err)
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
	// the writes. Hold the answer of every request that reads and writes
	// nothing (a Get, or a read-only transaction) until each contender has
	// either had one answered or finished, so that this interleaving always
	// happens instead of by luck. A single-transaction solution sends no
	// such read and never waits.
	gate := newBarrier(n)
	spy.After(func(r etcdharness.Request, err error) {
		if r.Reads() && !r.Writes() {
			gate.arrive()
		}
	})

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
		why := ""
		if env.Expired(odd[0].err) {
			why = " (they blocked until the test's deadline: Acquire tries once and returns)"
		}
		t.Errorf("%d contenders failed with an error other than ErrLocked%s, the first: %s: %v", len(odd), why, odd[0].owner, odd[0].err)
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

	// Now one contender at a time, with a competitor stepping in between
	// every two requests its Acquire sends: if A already holds the lock
	// there, A stalls past its TTL (its lease is revoked); then B takes
	// the lock. Whatever A's Acquire checked before the gap is stale after
	// it.
	etcdharness.EachGap(t, env, func(g *etcdharness.Gap, gap int64) {
		key := g.Key(fmt.Sprintf("acquire-gap-%d", gap))
		la, lb := g.Grant(30), g.Grant(30)
		var tokB int64
		g.Arm(func() {
			if kv, ok := g.Get(key); ok && kv.Lease == la {
				g.Revoke(la)
			}
			tokB = takeLock(t, g.Env, key, "replica-b", lb)
		})
		tokA, err := Acquire(g.Ctx, g.Cli, key, "replica-a", la)
		if gap == 0 {
			return
		}
		where := fmt.Sprintf("just before request %d of A's Acquire", gap)
		if tokB == 0 {
			t.Fatalf("%s, A's lease was revoked but B could not take the lock: A's key outlived its lease (was it put WithLease?)", where)
		}
		kv, ok := g.Get(key)
		if !ok || kv.Value != "replica-b" || kv.CreateRevision != tokB {
			t.Fatalf("B took the lock %s (token %d), but afterwards the key is %+v (exists=%v): A's Acquire wrote over it; check and write in one transaction", where, tokB, kv, ok)
		}
		switch {
		case errors.Is(err, ErrLocked):
		case err != nil:
			t.Fatalf("A's Acquire, with B taking the lock %s = %v, want ErrLocked or A's own token", where, err)
		default:
			resp, gerr := g.Admin.Get(g.Ctx, key, clientv3.WithRev(tokA))
			if gerr != nil || len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != "replica-a" || resp.Kvs[0].CreateRevision != tokA {
				t.Fatalf("A's Acquire returned token %d, but A's key was not created at revision %d (B took the lock %s, token %d): the token is the revision of your own transaction (resp.Header.Revision), not something read after it", tokA, tokA, where, tokB)
			}
		}
	})
}

// takeLock creates the lock key for owner on lease the way a correct
// Acquire does, for the test's own competitors; it returns the token, or 0
// when the key exists.
func takeLock(t *testing.T, env *etcdharness.Env, key, owner string, lease clientv3.LeaseID) int64 {
	t.Helper()
	resp, err := env.Admin.Txn(env.Ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, owner, clientv3.WithLease(lease))).
		Commit()
	if err != nil {
		t.Fatalf("test setup: take lock %s for %s: %v", key, owner, err)
	}
	if !resp.Succeeded {
		return 0
	}
	return resp.Header.Revision
}

func TestStep3_ReleaseOnlyYourOwnLock(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cli := env.Client()

	t.Run("owner releases", func(t *testing.T) {
		env := env.Sub(t)
		key := env.Key("lock-1")
		// Other locks whose keys start with this one's: the release is of
		// this key alone.
		siblings := []string{env.Key("lock-10"), env.Key("lock-1", "child")}
		for _, k := range siblings {
			takeLock(t, env, k, "replica-z", env.Grant(30))
		}
		tok, err := Acquire(env.Ctx, cli, key, "replica-a", env.Grant(30))
		if env.Expired(err) {
			t.Fatalf("Acquire on a free lock blocked until the test's deadline: it should send one transaction and return")
		}
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		if err := Release(env.Ctx, cli, key, tok); err != nil {
			t.Fatalf("Release by the owner: %v", err)
		}
		if kv, ok := env.Get(key); ok {
			t.Fatalf("after Release the key still exists: %+v", kv)
		}
		for _, k := range siblings {
			if _, ok := env.Get(k); !ok {
				t.Fatalf("Release of %s also deleted %s, another lock whose key starts with the same letters (replica-z held it): delete only the key itself, not with clientv3.WithPrefix()", key, k)
			}
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
			kv, ok := env.Get(key)
			switch {
			case err == nil && !ok:
				t.Errorf("A's stale Release (token %d) = nil, want ErrNotOwner: it deleted B's newer lock (token %d, created after A's lease ended). Delete only if the key's CreateRevision still equals the token, in one transaction", tokA, tokB)
			case err == nil:
				t.Errorf("A's stale Release (token %d) = nil and B's lock (token %d) is still there (%+v): nothing of A's was released, so say so with ErrNotOwner (check the transaction's Succeeded)", tokA, tokB, kv)
			default:
				t.Errorf("A's stale Release = %v, want ErrNotOwner", err)
			}
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

	t.Run("owner rewrote its lock value", func(t *testing.T) {
		env := env.Sub(t)
		key := env.Key("lock-3")
		la := env.Grant(30)
		tok := takeLock(t, env, key, "replica-a", la)
		// The owner updates its own key (a status, say): ModRevision moves,
		// CreateRevision does not, and the lock is still its own.
		if _, err := env.Admin.Put(env.Ctx, key, "replica-a (busy)", clientv3.WithLease(la)); err != nil {
			t.Fatal(err)
		}
		if err := Release(env.Ctx, cli, key, tok); err != nil {
			t.Fatalf("Release by the owner after it rewrote its lock key's value = %v, want nil: compare CreateRevision (set once, when the key is created), not ModRevision", err)
		}
		if _, ok := env.Get(key); ok {
			t.Fatal("the owner's Release left the key in place")
		}
	})

	t.Run("token 0 and a lock that never existed", func(t *testing.T) {
		env := env.Sub(t)
		if err := Release(env.Ctx, cli, env.Key("never-taken"), 0); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Release of a lock that does not exist with token 0 = %v, want ErrNotOwner: an absent key has CreateRevision 0 too, and nothing of yours was released", err)
		}
		if err := Release(env.Ctx, cli, env.Key("never-taken"), 42); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Release of a lock that does not exist = %v, want ErrNotOwner", err)
		}
		key := env.Key("lock-4")
		tok := takeLock(t, env, key, "replica-a", env.Grant(30))
		if err := Release(env.Ctx, cli, key, 0); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Release with token 0 of a held lock = %v, want ErrNotOwner", err)
		}
		if kv, ok := env.Get(key); !ok || kv.CreateRevision != tok {
			t.Fatalf("Release with token 0 changed the held lock: now %+v (exists=%v)", kv, ok)
		}
	})

	t.Run("same owner name, newer lock", func(t *testing.T) {
		env := env.Sub(t)
		key := env.Key("lock-5")
		la := env.Grant(30)
		old := takeLock(t, env, key, "replica-a", la)
		env.Revoke(la)
		// replica-a restarts and takes the lock again, under the same name.
		cur := takeLock(t, env, key, "replica-a", env.Grant(30))
		if err := Release(env.Ctx, cli, key, old); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Release with the token of replica-a's first, expired lock = %v, want ErrNotOwner: the lock is now a newer one (token %d), even though the name is the same", err, cur)
		}
		if kv, ok := env.Get(key); !ok || kv.CreateRevision != cur {
			t.Fatalf("a Release with the old token removed or changed the newer lock: now %+v (exists=%v)", kv, ok)
		}
	})

	t.Run("request failed is not a refusal", func(t *testing.T) {
		env := env.Sub(t)
		key := env.Key("lock-6")
		tok := takeLock(t, env, key, "replica-a", env.Grant(30))
		ctx, cancel := context.WithCancel(env.Ctx)
		cancel()
		if err := Release(ctx, cli, key, tok); !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotOwner) {
			t.Fatalf("Release with a cancelled context = %v, want an error wrapping context.Canceled and not ErrNotOwner", err)
		}
		if _, ok := env.Get(key); !ok {
			t.Fatal("a Release that could not be sent removed the lock")
		}
	})

	t.Run("a competitor in every gap", func(t *testing.T) {
		env := env.Sub(t)
		// A releases; just before one of its requests, A's lease runs out
		// and B takes the lock. B's lock must survive whatever A's
		// Release does after that.
		etcdharness.EachGap(t, env, func(g *etcdharness.Gap, gap int64) {
			key := g.Key(fmt.Sprintf("release-gap-%d", gap))
			la := g.Grant(30)
			tokA := takeLock(t, g.Env, key, "replica-a", la)
			var tokB int64
			g.Arm(func() {
				g.Revoke(la)
				tokB = takeLock(t, g.Env, key, "replica-b", g.Grant(30))
			})
			err := Release(g.Ctx, g.Cli, key, tokA)
			if gap == 0 {
				if err != nil {
					t.Fatalf("Release by the owner: %v", err)
				}
				return
			}
			where := fmt.Sprintf("just before request %d of A's Release", gap)
			if tokB != 0 {
				if kv, ok := g.Get(key); !ok || kv.Value != "replica-b" || kv.CreateRevision != tokB {
					t.Fatalf("B took the lock %s (token %d), and A's Release then removed or changed it: the key is %+v (exists=%v). Delete in the same transaction that checks the token", where, tokB, kv, ok)
				}
			}
			if gap == 1 && !errors.Is(err, ErrNotOwner) {
				t.Fatalf("A's Release after its lease ran out and B took the lock = %v, want ErrNotOwner", err)
			}
			if err != nil && !errors.Is(err, ErrNotOwner) {
				t.Fatalf("A's Release, with B taking the lock %s = %v, want nil (if A's delete came first) or ErrNotOwner", where, err)
			}
		})
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
