package etcdharness

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestSpyCountsAndHooks(t *testing.T) {
	env := New(t)
	cli := env.Client()
	spy := Attach(cli)
	key := env.Key("k")

	var order []string
	spy.Intercept(func(r Request) error {
		order = append(order, "before-"+string(r.Kind))
		return nil
	})
	spy.After(func(r Request, err error) { order = append(order, "after-"+string(r.Kind)) })

	if _, err := cli.Put(env.Ctx, key, "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Get(env.Ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Txn(env.Ctx).If(clientv3.Compare(clientv3.Value(key), "=", "1")).
		Then(clientv3.OpDelete(key)).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Do(env.Ctx, clientv3.OpGet(key)); err != nil {
		t.Fatal(err)
	}
	if got, want := spy.Puts.Load(), int64(1); got != want {
		t.Errorf("Puts = %d, want %d", got, want)
	}
	if got, want := spy.Reads.Load(), int64(2); got != want {
		t.Errorf("Reads = %d, want %d", got, want)
	}
	if got, want := spy.Txns.Load(), int64(1); got != want {
		t.Errorf("Txns = %d, want %d", got, want)
	}
	if got, want := spy.Deletes.Load(), int64(1); got != want {
		t.Errorf("Deletes = %d, want %d", got, want)
	}
	want := []string{"before-put", "after-put", "before-get", "after-get", "before-txn", "after-txn", "before-get", "after-get"}
	if !slices.Equal(order, want) {
		t.Fatalf("hooks ran %v, want %v", order, want)
	}
	if _, ok := env.Get(key); ok {
		t.Fatal("the transaction through the spy did not delete the key")
	}
}

// TestSpySeesEveryShape: a read, a put and a delete are recognised as
// such whether they are a plain call, an operation of a transaction, or
// of a transaction nested in one, sent with Txn or with Do.
func TestSpySeesEveryShape(t *testing.T) {
	env := New(t)
	cli := env.Client()
	spy := Attach(cli)
	own, other := env.Key("q", "own"), env.Key("q", "other")
	var seen []Request
	spy.Intercept(func(r Request) error { seen = append(seen, r); return nil })

	// A read-only transaction that reads the whole queue.
	if _, err := cli.Txn(env.Ctx).Then(clientv3.OpGet(env.Key("q")+"/", clientv3.WithPrefix())).Commit(); err != nil {
		t.Fatal(err)
	}
	// A claim and a release nested in one transaction, sent with Do.
	claim := clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(own), "=", 0)},
		[]clientv3.Op{clientv3.OpPut(own, "me")}, nil)
	release := clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(other), "=", 7)},
		[]clientv3.Op{clientv3.OpDelete(other)}, []clientv3.Op{clientv3.OpGet(other)})
	if _, err := cli.Do(env.Ctx, clientv3.OpTxn(nil, []clientv3.Op{claim, release}, nil)); err != nil {
		t.Fatal(err)
	}
	// A check of one key by comparison alone, and a leader read
	// (the first key of a prefix) that covers it.
	if _, err := cli.Txn(env.Ctx).If(clientv3.Compare(clientv3.CreateRevision(own), ">", 0)).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Get(env.Ctx, env.Key("q"), clientv3.WithFirstCreate()...); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4 {
		t.Fatalf("the interceptor saw %d requests, want 4", len(seen))
	}
	if r := seen[0]; !r.Reads() || r.Writes() || !r.ReadsKey(own) || !r.ReadsUnder(env.Key("q")+"/") {
		t.Errorf("a read-only transaction of the queue: Reads=%v Writes=%v ReadsKey(own)=%v (ops %+v)", r.Reads(), r.Writes(), r.ReadsKey(own), r.Ops)
	}
	r := seen[1]
	if !r.Puts() || !r.Deletes() || !r.Reads() {
		t.Errorf("nested claim and release: Puts=%v Deletes=%v Reads=%v, want all true (ops %+v)", r.Puts(), r.Deletes(), r.Reads(), r.Ops)
	}
	if w := r.Written(); len(w) != 2 || w[0].Op != OpPut || w[0].Key != own || w[0].Depth != 2 || w[1].Op != OpDelete || w[1].Key != other {
		t.Errorf("nested claim and release: Written() = %+v, want a put of %s and a delete of %s at depth 2", w, own, other)
	}
	if r := seen[2]; !r.ReadsKey(own) || r.Reads() || r.Writes() {
		t.Errorf("a compare-only transaction: ReadsKey(own)=%v Reads=%v Writes=%v, want true, false, false", r.ReadsKey(own), r.Reads(), r.Writes())
	}
	if r := seen[3]; !r.ReadsKey(own) || r.Kind != KindGet {
		t.Errorf("a read of the prefix's first key does not count as a read of %s: %+v", own, r)
	}
	if got := spy.Reads.Load(); got != 3 {
		t.Errorf("Reads = %d, want 3 (the read-only txn, the nested Else read, the leader read)", got)
	}
}

// TestSpyRecordsWatchStarts: each watch is recorded with its start
// revision and the revision of the read before it.
func TestSpyRecordsWatchStarts(t *testing.T) {
	env := New(t)
	cli := env.Client()
	spy := Attach(cli)
	resp, err := cli.Get(env.Ctx, env.Key("w"), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(env.Ctx)
	defer cancel()
	cli.Watch(ctx, env.Key("w"), clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
	cli.Watch(ctx, env.Key("w", "x"))
	got := spy.Watched()
	if len(got) != 2 {
		t.Fatalf("Watched() = %+v, want 2 watches", got)
	}
	if got[0].Rev != resp.Header.Revision+1 || got[0].LastRead != resp.Header.Revision || got[0].End == "" {
		t.Errorf("first watch recorded as %+v, want a prefix watch from %d after a read at %d", got[0], resp.Header.Revision+1, resp.Header.Revision)
	}
	if got[1].Rev != 0 || got[1].Key != env.Key("w", "x") {
		t.Errorf("second watch recorded as %+v, want one from now (Rev 0)", got[1])
	}
}

func TestSpyCountsWatchWakeUps(t *testing.T) {
	env := New(t)
	cli := env.Client()
	spy := Attach(cli)
	ctx, cancel := context.WithCancel(env.Ctx)
	wch := cli.Watch(ctx, env.Key("w"), clientv3.WithPrefix())
	// A watch is only guaranteed to see writes made after etcd created it;
	// a progress request answers once it has.
	if err := cli.RequestProgress(ctx); err != nil {
		t.Fatal(err)
	}
	if resp := <-wch; !resp.IsProgressNotify() {
		t.Fatalf("first response %+v is not the progress notification", resp)
	}
	for i := range 3 {
		if _, err := env.Admin.Put(env.Ctx, env.Key("w", string(rune('a'+i))), "v"); err != nil {
			t.Fatal(err)
		}
		if resp := <-wch; len(resp.Events) != 1 {
			t.Fatalf("write %d: watch gave %d events, want 1", i, len(resp.Events))
		}
	}
	if got := spy.WakeUps.Load(); got != 3 {
		t.Fatalf("WakeUps = %d, want 3", got)
	}
	if got := spy.Watches.Load(); got != 1 {
		t.Fatalf("Watches = %d, want 1", got)
	}
	cancel()
	select {
	case _, ok := <-wch:
		for ok {
			_, ok = <-wch
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the spy's watch channel did not close after its context was cancelled")
	}
}

func TestProxyFreezeHoldsTraffic(t *testing.T) {
	env := New(t)
	cli, px := env.ProxiedClient()
	if _, err := cli.Put(env.Ctx, env.Key("before"), "1"); err != nil {
		t.Fatalf("write through the open proxy: %v", err)
	}
	px.Freeze()
	if !px.Frozen() {
		t.Fatal("Frozen() = false after Freeze")
	}
	ctx, cancel := context.WithTimeout(env.Ctx, 300*time.Millisecond)
	_, err := cli.Put(ctx, env.Key("during"), "2")
	cancel()
	if err == nil {
		t.Fatal("a write through a frozen proxy succeeded")
	}
	if _, ok := env.Get(env.Key("during")); ok {
		t.Fatal("a write sent during the freeze reached etcd while frozen")
	}
	px.Thaw()
	if px.Frozen() {
		t.Fatal("Frozen() = true after Thaw")
	}
	if _, err := cli.Put(env.Ctx, env.Key("after"), "3"); err != nil {
		t.Fatalf("write after Thaw: %v", err)
	}
	if kv, ok := env.Get(env.Key("after")); !ok || kv.Value != "3" {
		t.Fatalf("key written after Thaw is %+v (exists=%v), want 3", kv, ok)
	}
}

func TestWaitForSeesChanges(t *testing.T) {
	env := New(t)
	key := env.Key("flag")
	go func() { env.Admin.Put(env.Ctx, key, "up") }()
	env.WaitFor(env.Prefix, 5*time.Second, "the flag", func() bool {
		_, ok := env.Get(key)
		return ok
	})
}

func TestRevokeOfAnEndedLeaseIsFine(t *testing.T) {
	env := New(t)
	id := env.Grant(30)
	if _, err := env.Admin.Put(env.Ctx, env.Key("k"), "v", clientv3.WithLease(id)); err != nil {
		t.Fatal(err)
	}
	env.Revoke(id)
	env.Revoke(id) // already gone: must not fail the test
	if _, ok := env.Get(env.Key("k")); ok {
		t.Fatal("the key outlived its revoked lease")
	}
}

func TestEnvRemovesItsKeys(t *testing.T) {
	var prefix string
	t.Run("inner", func(t *testing.T) {
		env := New(t)
		prefix = env.Prefix
		if _, err := env.Admin.Put(env.Ctx, env.Key("left", "behind"), "x"); err != nil {
			t.Fatal(err)
		}
	})
	outer := New(t)
	resp, err := outer.Admin.Get(outer.Ctx, prefix+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Fatalf("%d keys were left under %s after the test ended", resp.Count, prefix)
	}
}

func TestSpyInterceptNumbersAndFails(t *testing.T) {
	env := New(t)
	cli := env.Client()
	spy := Attach(cli)
	key := env.Key("k")
	var seen []Request
	injected := errors.New("injected")
	spy.Intercept(func(r Request) error {
		seen = append(seen, r)
		if r.Kind == KindGrant {
			return injected
		}
		return nil
	})
	if _, err := cli.Get(env.Ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Txn(env.Ctx).Then(clientv3.OpDelete(key)).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Grant(env.Ctx, 5); !errors.Is(err, injected) {
		t.Fatalf("Grant with an injected failure = %v, want the injected error", err)
	}
	if len(seen) != 3 || seen[0].Kind != KindGet || seen[0].Key != key || seen[1].Kind != KindTxn || !seen[1].Deletes() || seen[2].Kind != KindGrant {
		t.Fatalf("the interceptor saw %+v, want a get of %s, a deleting txn, a grant", seen, key)
	}
	for i, r := range seen {
		if r.N != int64(i+1) {
			t.Fatalf("request %d numbered %d", i+1, r.N)
		}
	}
	if got := spy.Requests(); got != 3 {
		t.Fatalf("Requests() = %d, want 3", got)
	}
	if len(spy.Granted()) != 0 {
		t.Fatalf("Granted() = %v after a failed grant, want none", spy.Granted())
	}
}

func TestSpyLoseKeepAlivesEndsTheSession(t *testing.T) {
	env := New(t)
	cli := env.Client()
	spy := Attach(cli)
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Orphan()
	if got := spy.Granted(); len(got) != 1 || got[0] != s.Lease() {
		t.Fatalf("Granted() = %v, want the session's lease %x", got, int64(s.Lease()))
	}
	select {
	case <-s.Done():
		t.Fatal("the session ended before its keep-alives were lost")
	default:
	}
	if _, n := spy.LoseKeepAlives(); n != 1 {
		t.Fatalf("LoseKeepAlives ended %d streams, want 1", n)
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the session's Done did not close after its keep-alives were lost")
	}
	if info, ok := env.Lease(s.Lease()); !ok || info.GrantedTTL != 5 {
		t.Fatalf("the lease is %+v (exists=%v): losing keep-alives must not revoke it", info, ok)
	}
	env.Revoke(s.Lease())
	if _, ok := env.Lease(s.Lease()); ok {
		t.Fatal("Lease reports a revoked lease as existing")
	}
}

func TestSpyKeepAlivesOpen(t *testing.T) {
	env := New(t)
	cli := env.Client()
	spy := Attach(cli)
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	if got := spy.KeepAlivesOpen(); got != 1 {
		t.Fatalf("KeepAlivesOpen() = %d with one session, want 1", got)
	}
	// Orphan stops the keep-alives and returns once the session's Done has
	// closed, which happens after the spy's stream ended.
	s.Orphan()
	if got := spy.KeepAlivesOpen(); got != 0 {
		t.Fatalf("KeepAlivesOpen() = %d after Orphan, want 0", got)
	}
	s2, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Orphan()
	spy.LoseKeepAlives()
	if got := spy.KeepAlivesOpen(); got != 0 {
		t.Fatalf("KeepAlivesOpen() = %d after LoseKeepAlives, want 0", got)
	}
}

func TestSubFailsTheSubtest(t *testing.T) {
	env := New(t)
	t.Run("inner", func(t *testing.T) {
		sub := env.Sub(t)
		if sub.t != t || sub.Prefix != env.Prefix || sub.Ctx != env.Ctx {
			t.Fatal("Sub did not keep the prefix and context or did not switch the test")
		}
	})
	if env.t != t {
		t.Fatal("Sub changed the parent Env")
	}
}
