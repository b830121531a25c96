package etcdharness

import (
	"context"
	"errors"
	"os"
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
	spy.BeforeGet(func(string) { order = append(order, "before-get") })
	spy.AfterGet(func(string) { order = append(order, "after-get") })
	spy.BeforeTxn(func() { order = append(order, "before-txn") })

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
	if got, want := spy.Gets.Load(), int64(2); got != want {
		t.Errorf("Gets = %d, want %d", got, want)
	}
	if got, want := spy.Txns.Load(), int64(1); got != want {
		t.Errorf("Txns = %d, want %d", got, want)
	}
	want := []string{"before-get", "after-get", "before-txn", "before-get", "after-get"}
	if len(order) != len(want) {
		t.Fatalf("hooks ran %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("hooks ran %v, want %v", order, want)
		}
	}
	if _, ok := env.Get(key); ok {
		t.Fatal("the transaction through the spy did not delete the key")
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
