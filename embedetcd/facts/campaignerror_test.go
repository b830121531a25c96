package facts

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/faultproxy"
)

const campaignErrorPage = "update content/lessons/07-etcd-election-recipe/lesson.md, " +
	"\"When Campaign returns an error\", and quiz l07-campaign-error"

// Lesson 07-etcd-election-recipe, page "When Campaign returns an error",
// says (etcd issue 21128) that a Campaign which fails while waiting, with
// an error other than its context ending, leaves its key in the queue:
// Resign afterwards does nothing, the key lives as long as the session,
// and once the candidates ahead of it leave it is the leader key of a
// candidate that is not campaigning. Deleting it, guarded by e.Rev(),
// ends that. The error here is the one the issue reports: the waiter's
// connection breaks, the revision its watch resumes from is compacted
// meanwhile, and the resumed watch fails with ErrCompacted.
func TestFailedCampaignLeavesItsKey(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	admin := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 30*time.Second)
	const pfx = "facts/campaign-error"
	px, err := faultproxy.New(strings.TrimPrefix(srv.Endpoints()[0], "http://"))
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	defer px.Close()
	cc := newClient(t, "http://"+px.Addr())
	watches := watchCreations(cc)

	ls, err := concurrency.NewSession(admin, concurrency.WithTTL(30))
	if err != nil {
		t.Fatalf("leader session: %v", err)
	}
	defer ls.Close()
	le := concurrency.NewElection(ls, pfx)
	if err := le.Campaign(ctx, "leader"); err != nil {
		t.Fatalf("leader campaign: %v", err)
	}
	// The candidate's lease outlives the test, so only what the code does
	// can remove its key.
	cs, err := concurrency.NewSession(cc, concurrency.WithTTL(60))
	if err != nil {
		t.Fatalf("candidate session: %v", err)
	}
	defer cs.Close()
	ce := concurrency.NewElection(cs, pfx)
	done := make(chan error, 1)
	go func() { done <- ce.Campaign(ctx, "candidate") }()
	compactUnderWaiter(t, ctx, admin, px, watches, le.Key())
	var cerr error
	select {
	case cerr = <-done:
	case <-ctx.Done():
		t.Fatalf("Campaign did not return after its watch's start revision was compacted")
	}
	if !errors.Is(cerr, rpctypes.ErrCompacted) {
		t.Fatalf("Campaign returned %v, want ErrCompacted (the test's fault): %s", cerr, campaignErrorPage)
	}
	checkLeftKey(t, ctx, admin, le, ce, cs.Lease())
}

// compactUnderWaiter makes the waiting watch on key, opened through px,
// fail as in etcd issue 21128: once the watch is set up, px cuts the
// waiter off, a write and a compaction move etcd past the revision the
// watch will resume from, and px lets the waiter reconnect.
func compactUnderWaiter(t *testing.T, ctx context.Context, admin *clientv3.Client, px *faultproxy.Proxy,
	watches *createdWatcher, key string) {
	t.Helper()
	watches.waitCreated(t, ctx, key)
	px.Partition()
	defer px.Heal()
	noise, err := admin.Put(ctx, "facts/compact-under-waiter", "x")
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if _, err := admin.Compact(ctx, noise.Header.Revision); err != nil {
		t.Fatalf("compact: %v", err)
	}
}

// The page contrasts Campaign with Mutex.Lock, which deletes its own key
// when its wait fails, whatever the error.
func TestFailedLockRemovesItsKey(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	admin := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 30*time.Second)
	const pfx = "facts/lock-error"
	px, err := faultproxy.New(strings.TrimPrefix(srv.Endpoints()[0], "http://"))
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	defer px.Close()
	wc := newClient(t, "http://"+px.Addr())
	watches := watchCreations(wc)
	owner, err := concurrency.NewSession(admin, concurrency.WithTTL(30))
	if err != nil {
		t.Fatalf("owner session: %v", err)
	}
	defer owner.Close()
	om := concurrency.NewMutex(owner, pfx)
	if err := om.Lock(ctx); err != nil {
		t.Fatalf("owner lock: %v", err)
	}
	ws, err := concurrency.NewSession(wc, concurrency.WithTTL(60))
	if err != nil {
		t.Fatalf("waiter session: %v", err)
	}
	defer ws.Close()
	wm := concurrency.NewMutex(ws, pfx)
	done := make(chan error, 1)
	go func() { done <- wm.Lock(ctx) }()
	compactUnderWaiter(t, ctx, admin, px, watches, om.Key())
	var lerr error
	select {
	case lerr = <-done:
	case <-ctx.Done():
		t.Fatalf("Lock did not return after its watch's start revision was compacted")
	}
	if !errors.Is(lerr, rpctypes.ErrCompacted) {
		t.Fatalf("Lock returned %v, want ErrCompacted (the test's fault)", lerr)
	}
	r, err := admin.Get(ctx, pfx+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	if r.Count != 1 {
		t.Errorf("after Lock failed with %v, %d keys were left under %s, want 1 (the owner's): %s",
			lerr, r.Count, pfx, campaignErrorPage)
	}
}

// checkLeftKey checks what the page says of a candidate ce whose Campaign
// failed: its key stays, Resign does not remove it, it becomes the leader
// key when le resigns, and a delete guarded by ce.Rev() removes it.
func checkLeftKey(t *testing.T, ctx context.Context, cli *clientv3.Client, le, ce *concurrency.Election, lease clientv3.LeaseID) {
	t.Helper()
	key := ce.Key()
	present := func() bool {
		r, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		return len(r.Kvs) == 1 && clientv3.LeaseID(r.Kvs[0].Lease) == lease
	}
	if key == "" || !present() {
		t.Fatalf("after the failed Campaign its key %q is gone; the page says it stays: %s", key, campaignErrorPage)
	}
	if err := ce.Resign(ctx); err != nil {
		t.Fatalf("resign after the failed Campaign: %v", err)
	}
	if !present() {
		t.Errorf("Resign after the failed Campaign removed its key; the page says Resign then does nothing: %s", campaignErrorPage)
	}
	if err := le.Resign(ctx); err != nil {
		t.Fatalf("leader resign: %v", err)
	}
	r, err := le.Leader(ctx)
	if err != nil || string(r.Kvs[0].Key) != key {
		t.Errorf("with the leader gone, Leader returned %v (err %v), want the failed candidate's key %s: %s",
			r, err, key, campaignErrorPage)
	}
	del, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", ce.Rev())).
		Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		t.Fatalf("guarded delete: %v", err)
	}
	if !del.Succeeded || present() {
		t.Errorf("the delete guarded by e.Rev() = %d did not remove %s: %s", ce.Rev(), key, campaignErrorPage)
	}
}

// The same page contrasts the error case with a Campaign whose context
// ends while it waits: then Campaign resigns for the caller and its key
// is gone by the time it returns.
func TestCancelledCampaignRemovesItsKey(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 15*time.Second)
	const pfx = "facts/campaign-cancel"
	ls, err := concurrency.NewSession(cli, concurrency.WithTTL(30))
	if err != nil {
		t.Fatalf("leader session: %v", err)
	}
	defer ls.Close()
	le := concurrency.NewElection(ls, pfx)
	if err := le.Campaign(ctx, "leader"); err != nil {
		t.Fatalf("leader campaign: %v", err)
	}
	cc := newClient(t, srv.Endpoints()...)
	watches := watchCreations(cc)
	cs, err := concurrency.NewSession(cc, concurrency.WithTTL(30))
	if err != nil {
		t.Fatalf("candidate session: %v", err)
	}
	defer cs.Close()
	ce := concurrency.NewElection(cs, pfx)
	c, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ce.Campaign(c, "candidate") }()
	watches.waitCreated(t, ctx, le.Key()) // waiting, past its Txn
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled Campaign returned %v, want context.Canceled", err)
	}
	r, err := cli.Get(ctx, pfx+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	if r.Count != 1 {
		t.Errorf("after a cancelled Campaign returned, %d keys were left under %s, want 1 (the leader's): %s",
			r.Count, pfx, campaignErrorPage)
	}
}
