package fencedwrite

// Grader for lab 06. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness).
//
// Wrong solutions these tests defend against (the ones marked [mutant] are
// kept in solutions/06_fenced_write/testdata/mutants and run by labcheck):
//   - check the lock with a Get, then Put [mutant get_then_put.patch]: Step 3
//     pauses the writer between the two, the lock changes hands, and the
//     stale write lands after the new owner's.
//   - check only that the lock key exists [mutant exists_only.patch]: Steps 2
//     and 3 (the new owner's key exists too).
//   - compare ModRevision instead of CreateRevision [mutant
//     mod_revision.patch]: Step 1 (the owner rewrites its own lock key, as
//     etcd's Proclaim does, and must still be able to write).
//   - "<=" instead of "=" on the token [mutant at_most_token.patch]: Step 2
//     (a vanished lock has CreateRevision 0, which is below every token).
//   - reporting a failed request (cancelled context) as ErrNotOwner, or a
//     refused write as success: Step 2.

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs/internal/etcdharness"
)

func TestMain(m *testing.M) { os.Exit(etcdharness.Main(m)) }

// takeLock creates the lock key for owner on a fresh lease, the way lab 05
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
	spyA.AfterGet(func(string) { stall() })
	spyA.BeforeTxn(stall)

	_, err := Write(env.Ctx, cliA, lockKey, tokA, key, "A: resumed")
	hist.Record(etcdharness.Write{Resource: key, Writer: "A", Token: tokA, Accepted: err == nil})
	if tokB == 0 {
		t.Fatal("A's Write sent no Get and no transaction to etcd")
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
}
