package experiment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// losingKV is a KV whose next transactions lose their answer the way a
// leader change or a killed member makes them: applied and then
// "leader changed" (apply), or "leader changed" without reaching etcd,
// or no answer before the try's deadline (timeout: the deadline's error
// at once, so the test does not wait for it). afterRead, if set, runs
// once after the first read: a proposal committed late.
type losingKV struct {
	clientv3.KV
	lose      int // how many transactions still lose their answer
	apply     bool
	timeout   bool
	afterRead func()
	txns      int
}

func (k *losingKV) Txn(ctx context.Context) clientv3.Txn {
	return &losingTxn{Txn: k.KV.Txn(ctx), kv: k}
}

func (k *losingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	g, err := k.KV.Get(ctx, key, opts...)
	if f := k.afterRead; f != nil && err == nil {
		k.afterRead = nil
		f()
	}
	return g, err
}

type losingTxn struct {
	clientv3.Txn
	kv *losingKV
}

func (t *losingTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *losingTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *losingTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *losingTxn) Commit() (*clientv3.TxnResponse, error) {
	t.kv.txns++
	if t.kv.lose == 0 {
		return t.Txn.Commit()
	}
	t.kv.lose--
	switch {
	case t.kv.timeout:
		return nil, context.DeadlineExceeded
	case t.kv.apply:
		if _, err := t.Txn.Commit(); err != nil {
			return nil, err
		}
	}
	return nil, rpctypes.ErrLeaderChanged
}

// TestLockTxnAfterALostAnswer: a lock transaction whose answer is lost
// reads the key, takes the lock it finds its own, sends again when it
// finds none, and says who holds the key otherwise; each read is in the
// facts, and the key is created once.
func TestLockTxnAfterALostAnswer(t *testing.T) {
	srv, _ := etcds(t)
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	lease, err := cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Revoke(ctx, lease.ID)
	key := func(name string) string { return fmt.Sprintf("locktxn/%d/%s", time.Now().UnixNano(), name) }
	commit := func(t *testing.T, kv *losingKV, k string) created {
		t.Helper()
		a, err := CreateKey{Key: k, Value: "p1", Lease: lease.ID}.Commit(ctx, kv, 10*time.Second)
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
		return a
	}
	version := func(t *testing.T, k string) (int64, int64) {
		t.Helper()
		g, err := cli.Get(ctx, k)
		if err != nil || len(g.Kvs) != 1 {
			t.Fatalf("read %s: %v %v", k, g, err)
		}
		return g.Kvs[0].Version, g.Kvs[0].CreateRevision
	}

	t.Run("applied, answer lost", func(t *testing.T) {
		k := key("applied")
		kv := &losingKV{KV: cli.KV, lose: 1, apply: true}
		a := commit(t, kv, k)
		v, rev := version(t, k)
		if !a.Succeeded || a.Revision != rev || v != 1 || a.Tries != 1 || kv.txns != 1 {
			t.Errorf("got %+v after %d txns; key version %d created at %d: want the lock taken at %d, sent once", a, kv.txns, v, rev, rev)
		}
		if len(a.Resolved) != 1 || !a.Resolved[0].Applied || !strings.Contains(a.Resolved[0].Err, "leader changed") {
			t.Errorf("resolved %+v, want one read that found the key its own after leader changed", a.Resolved)
		}
	})
	t.Run("not applied, answer lost", func(t *testing.T) {
		k := key("lost")
		kv := &losingKV{KV: cli.KV, lose: 1}
		a := commit(t, kv, k)
		v, rev := version(t, k)
		if !a.Succeeded || a.Revision != rev || v != 1 || a.Tries != 2 {
			t.Errorf("got %+v; key version %d created at %d: want the lock taken on the second try", a, v, rev)
		}
		if len(a.Resolved) != 1 || a.Resolved[0].Applied || a.Resolved[0].Held != nil {
			t.Errorf("resolved %+v, want one read that found no key", a.Resolved)
		}
	})
	t.Run("no answer at all", func(t *testing.T) {
		k := key("hang")
		kv := &losingKV{KV: cli.KV, lose: 1, timeout: true}
		a := commit(t, kv, k)
		if _, rev := version(t, k); !a.Succeeded || a.Revision != rev || a.Tries != 2 || len(a.Resolved) != 1 {
			t.Errorf("got %+v: want the try given up at its deadline, checked, and sent again", a)
		}
	})
	t.Run("held by another, answer lost", func(t *testing.T) {
		k := key("held")
		if _, err := cli.Put(ctx, k, "p2"); err != nil {
			t.Fatal(err)
		}
		a := commit(t, &losingKV{KV: cli.KV, lose: 1}, k)
		if a.Succeeded || a.Held == nil || a.Held.Value != "p2" {
			t.Errorf("got %+v: want the lock refused, held by p2", a)
		}
		if len(a.Resolved) != 1 || a.Resolved[0].Applied || a.Resolved[0].Held == nil || a.Resolved[0].Held.Value != "p2" {
			t.Errorf("resolved %+v, want a read that found p2's key", a.Resolved)
		}
		if text := ResolvedText(a.Resolved); !strings.Contains(text, "found p2 holding the key") {
			t.Errorf("text %q does not say whose key the read found", text)
		}
	})
	t.Run("applied after the read", func(t *testing.T) {
		k := key("late")
		kv := &losingKV{KV: cli.KV, lose: 1}
		kv.afterRead = func() { // the lost proposal commits after all
			if _, err := cli.Put(ctx, k, "p1", clientv3.WithLease(lease.ID)); err != nil {
				t.Error(err)
			}
		}
		a := commit(t, kv, k)
		v, rev := version(t, k)
		if !a.Succeeded || a.Revision != rev || v != 1 {
			t.Errorf("got %+v; key version %d: want the lock its own from the late write, not a second put", a, v)
		}
		if len(a.Resolved) != 2 || !a.Resolved[1].Applied {
			t.Errorf("resolved %+v, want the failed comparison on its own key recorded", a.Resolved)
		}
	})
}
