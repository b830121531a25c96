package fencedwrite

// Grader for lab 5.2. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness).
//
// Wrong solutions these tests defend against (mutants and learner bugs
// are kept in solutions/06_fenced_write/testdata and run by labcheck):
//   - check the lock with a Get, then Put: Step 3 pauses the writer
//     between the two (and puts a competitor before every request the
//     writer sends), the lock changes hands, and the stale write lands
//     after the new owner's.
//   - check only that the lock key exists, or that its CreateRevision is
//     at least the token: Steps 2 and 3 (the new owner's key passes too).
//   - compare ModRevision instead of CreateRevision: Step 1 (the owner
//     rewrites its own lock key, as etcd's Proclaim does, and must still
//     be able to write).
//   - "<=" instead of "=" on the token, or trusting token 0: Step 2 (a
//     vanished lock has CreateRevision 0, which equals token 0 and is
//     below every other token).
//   - reporting a failed request (cancelled context) as ErrNotOwner, a
//     refused write as success, or writing in the Else branch anyway:
//     Step 2.
//   - reading the revision back after the write, or retrying a refused
//     write with the lock's current CreateRevision: Step 3.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs/internal/etcdharness"
)

func TestMain(m *testing.M) { os.Exit(etcdharness.Main(m)) }

// takeLock creates the lock key for owner on a fresh lease, the way lab 7.1
// does, and returns the lease and the fencing token.
func takeLock(t *testing.T, env *etcdharness.Env, lockKey, owner string) (clientv3.LeaseID, int64) {
	t.Helper()
	lease := env.Grant(30)
	resp, err := env.Admin.Txn(env.Ctx).
		If(clientv3.Compare(clientv3.CreateRevision(lockKey), "=", 0)).
		Then(clientv3.OpPut(lockKey, owner, clientv3.WithLease(lease))).
		Commit()
	if err != nil || !resp.Succeeded {
		t.Fatalf("test setup: take lock %s for %s: succeeded=%v err=%v", lockKey, owner, resp != nil && resp.Succeeded, err)
	}
	return lease, resp.Header.Revision
}

func TestStep1_OwnerWrites(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cli := env.Client()
	lockKey, key := env.Key("lock"), env.Key("data")
	lease, token := takeLock(t, env, lockKey, "replica-a")

	rev, err := Write(env.Ctx, cli, lockKey, token, key, "v1")
	if err != nil {
		t.Fatalf("Write by the lock owner: %v", err)
	}
	kv, ok := env.Get(key)
	if !ok || kv.Value != "v1" {
		t.Fatalf("after the owner's Write the key is %+v (exists=%v), want value v1", kv, ok)
	}
	if rev != kv.ModRevision {
		t.Errorf("Write returned revision %d, want the revision of the write, %d", rev, kv.ModRevision)
	}
	if _, ok := env.Get(lockKey); !ok {
		t.Fatal("Write removed or replaced the lock key")
	}

	// The owner rewrites its own lock key (as etcd's Proclaim does): the
	// key's ModRevision moves, its CreateRevision does not, and the owner
	// is still the owner.
	if _, err := env.Admin.Put(env.Ctx, lockKey, "replica-a (busy)", clientv3.WithLease(lease)); err != nil {
		t.Fatal(err)
	}
	for i, v := range []string{"v2", "v3"} {
		if _, err := Write(env.Ctx, cli, lockKey, token, key, v); err != nil {
			t.Fatalf("write %d by the owner after it updated its lock key's value: %v (is the comparison on CreateRevision?)", i+2, err)
		}
	}
	if kv, _ := env.Get(key); kv.Value != "v3" {
		t.Fatalf("key holds %q, want v3", kv.Value)
	}
}

func TestStep2_RefusedAfterLoss(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cli := env.Client()

	t.Run("lock expired", func(t *testing.T) {
		env := env.Sub(t)
		lockKey, key := env.Key("lock-1"), env.Key("data-1")
		lease, token := takeLock(t, env, lockKey, "replica-a")
		env.Revoke(lease) // the lease runs out while A is paused
		_, err := Write(env.Ctx, cli, lockKey, token, key, "late")
		if !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Write after the lock expired = %v, want ErrNotOwner", err)
		}
		if kv, ok := env.Get(key); ok {
			t.Fatalf("the refused write landed anyway: %+v", kv)
		}
	})

	t.Run("lock taken by a newer owner", func(t *testing.T) {
		env := env.Sub(t)
		lockKey, key := env.Key("lock-2"), env.Key("data-2")
		leaseA, tokA := takeLock(t, env, lockKey, "replica-a")
		env.Revoke(leaseA)
		_, tokB := takeLock(t, env, lockKey, "replica-b")
		if _, err := Write(env.Ctx, cli, lockKey, tokB, key, "from B"); err != nil {
			t.Fatalf("B, the owner, could not write: %v", err)
		}
		if _, err := Write(env.Ctx, cli, lockKey, tokA, key, "from A"); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("A's Write with its old token %d while B holds token %d = %v, want ErrNotOwner", tokA, tokB, err)
		}
		if kv, _ := env.Get(key); kv.Value != "from B" {
			t.Fatalf("key holds %q, want B's value", kv.Value)
		}
	})

	t.Run("never locked", func(t *testing.T) {
		env := env.Sub(t)
		_, err := Write(env.Ctx, cli, env.Key("no-such-lock"), 5, env.Key("data-3"), "x")
		if !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Write under a lock that does not exist = %v, want ErrNotOwner", err)
		}
	})

	t.Run("token 0", func(t *testing.T) {
		env := env.Sub(t)
		// A writer whose token was never set (0) holds no lock. An absent
		// lock key compares as CreateRevision 0, so "= token" alone lets
		// it through.
		key := env.Key("data-5")
		_, err := Write(env.Ctx, cli, env.Key("lock-5"), 0, key, "unfenced")
		if !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Write with token 0 under a lock that does not exist = %v, want ErrNotOwner: no lock is created at revision 0", err)
		}
		if kv, ok := env.Get(key); ok {
			t.Fatalf("the write with token 0 landed: %+v", kv)
		}
		lockKey := env.Key("lock-6")
		takeLock(t, env, lockKey, "replica-a")
		if _, err := Write(env.Ctx, cli, lockKey, 0, key, "unfenced"); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("Write with token 0 under a held lock = %v, want ErrNotOwner", err)
		}
	})

	t.Run("request failed is not a refusal", func(t *testing.T) {
		env := env.Sub(t)
		lockKey := env.Key("lock-4")
		_, token := takeLock(t, env, lockKey, "replica-a")
		ctx, cancel := context.WithCancel(env.Ctx)
		cancel()
		_, err := Write(ctx, cli, lockKey, token, env.Key("data-4"), "x")
		if err == nil || errors.Is(err, ErrNotOwner) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Write with a cancelled context = %v, want an error wrapping context.Canceled and not ErrNotOwner", err)
		}
	})
}

func TestStep3_PausedWriterIsFenced(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	lockKey, key := env.Key("lock"), env.Key("data")
	cliA, cliB := env.Client(), env.Client()
	spyA := etcdharness.Attach(cliA)
	hist := &etcdharness.History{}

	leaseA, tokA := takeLock(t, env, lockKey, "replica-a")
	if _, err := Write(env.Ctx, cliA, lockKey, tokA, key, "A: started"); err != nil {
		t.Fatalf("A's first write: %v", err)
	}
	hist.Record(etcdharness.Write{Resource: key, Writer: "A", Token: tokA, Accepted: true})

	// A's next write stalls at the worst moment: right after it has read
	// anything, or right before its transaction is sent. During the stall
	// A's lease expires (forced), B takes the lock and writes.
	var tokB int64
	var once sync.Once
	stall := func() {
		once.Do(func() {
			env.Revoke(leaseA)
			_, tokB = takeLock(t, env, lockKey, "replica-b")
			_, err := Write(env.Ctx, cliB, lockKey, tokB, key, "B: committed")
			if err != nil {
				t.Errorf("B's write as the new owner: %v", err)
			}
			hist.Record(etcdharness.Write{Resource: key, Writer: "B", Token: tokB, Accepted: err == nil})
		})
	}
	// Whatever the shape: a Get or a transaction that only reads or
	// compares, answered; or a request that writes, about to be sent.
	spyA.After(func(r etcdharness.Request, err error) {
		if !r.Writes() {
			stall()
		}
	})
	spyA.Intercept(func(r etcdharness.Request) error {
		if r.Writes() {
			stall()
		}
		return nil
	})

	_, err := Write(env.Ctx, cliA, lockKey, tokA, key, "A: resumed")
	hist.Record(etcdharness.Write{Resource: key, Writer: "A", Token: tokA, Accepted: err == nil})
	if tokB == 0 {
		t.Fatal("A's Write sent no request to etcd")
	}
	if !errors.Is(err, ErrNotOwner) {
		t.Errorf("A's write after a pause in which B took over = %v, want ErrNotOwner", err)
	}
	if err := etcdharness.CheckTokenOrder(hist.Writes()); err != nil {
		t.Error(err)
	}
	if kv, _ := env.Get(key); kv.Value != "B: committed" {
		t.Fatalf("the data key holds %q, want B's write to survive", kv.Value)
	}

	// The same handover, staged just before each request A's Write sends,
	// one run per request: whatever A learnt before the gap is stale
	// after it.
	etcdharness.EachGap(t, env, func(g *etcdharness.Gap, gap int64) {
		lockKey, key := g.Key(fmt.Sprintf("lock-gap-%d", gap)), g.Key(fmt.Sprintf("data-gap-%d", gap))
		leaseA, tokA := takeLock(t, g.Env, lockKey, "replica-a")
		hist := &etcdharness.History{}
		var tokB int64
		g.Arm(func() {
			// A's lease runs out; A's replacement, restarted under the
			// same name, takes the lock: only the token tells them apart.
			g.Revoke(leaseA)
			_, tokB = takeLock(t, g.Env, lockKey, "replica-a")
			_, err := g.Admin.Txn(g.Ctx).
				If(clientv3.Compare(clientv3.CreateRevision(lockKey), "=", tokB)).
				Then(clientv3.OpPut(key, "B")).Commit()
			if err != nil {
				t.Fatalf("test setup: B's write: %v", err)
			}
			hist.Record(etcdharness.Write{Resource: key, Writer: "B", Token: tokB, Accepted: true})
		})
		rev, err := Write(g.Ctx, g.Cli, lockKey, tokA, key, "A")
		if gap == 0 {
			if err != nil {
				t.Fatalf("A's Write as the owner: %v", err)
			}
			return
		}
		where := fmt.Sprintf("just before request %d of A's Write (B is a restarted replica-a, same name, newer token)", gap)
		switch {
		case err == nil:
			// Only right if A's write landed before the handover, and rev
			// must then be the revision of A's own write.
			resp, gerr := g.Admin.Get(g.Ctx, key, clientv3.WithRev(rev))
			if gerr != nil || len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != "A" || resp.Kvs[0].ModRevision != rev {
				t.Fatalf("A's Write returned revision %d, but A's value was not written at %d (B took the lock and wrote %s): return the revision from your own transaction's answer", rev, rev, where)
			}
			hist.Record(etcdharness.Write{Resource: key, Writer: "A", Token: tokA, Accepted: true})
		case errors.Is(err, ErrNotOwner):
		default:
			t.Fatalf("A's Write, with B taking over %s = %v, want ErrNotOwner (or success, if A's write came first)", where, err)
		}
		if kv, _ := g.Get(key); kv.Value != "B" {
			t.Fatalf("B took the lock and wrote %s, but the data key now holds %q: A's stale write landed after B's. Check and write in one transaction", where, kv.Value)
		}
		if err := etcdharness.CheckTokenOrder(hist.Writes()); err != nil {
			t.Error(err)
		}
	})
}
