package facts

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/testwait"
)

// startTrio starts the playground's 3-member cluster (ClusterTicks: a
// 500 ms election timeout), closed when the test ends, and picks a member
// that is not the raft leader: the one the tests cut off, so the other two
// keep their leader and go on committing.
func startTrio(t *testing.T, ctx context.Context) (cl *embedetcd.Cluster, f int, others []string) {
	t.Helper()
	cl, err := embedetcd.StartCluster(ctx, 3, embedetcd.WithLogger(zap.NewNop()),
		embedetcd.WithCloseWait(100*time.Millisecond))
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { cl.Close() })
	// A loaded machine can hold an election right after the start.
	lead := -1
	testwait.Until(t, 20*time.Second, "a raft leader", func() bool { lead, err = cl.Leader(); return err == nil },
		func() string { return fmt.Sprint(err) })
	f = (lead + 1) % 3
	for i, m := range cl.Members() {
		if i != f {
			others = append(others, m.Endpoint())
		}
	}
	return cl, f, others
}

// clientFor is cl.ClientFor that fails the test on an error.
func clientFor(t *testing.T, cl *embedetcd.Cluster, endpoints ...string) *clientv3.Client {
	t.Helper()
	cli, err := cl.ClientFor(endpoints...)
	if err != nil {
		t.Fatalf("client for %v: %v", endpoints, err)
	}
	return cli
}

// isolation is member f cut off from both of its peers, with a watch on f
// that asks for a leader (clientv3.WithRequireLeader): etcd ends such a
// watch once the member has seen no leader for three election timeouts
// in a row (maxNoLeaderCnt in the server's v3rpc interceptor), which is
// the event the tests wait on instead of a sleep.
type isolation struct {
	cl *embedetcd.Cluster
	f  int
	rl clientv3.WatchChan
}

// isolate opens the leader-requiring watch on f, on a client of its own,
// waits until etcd has set it up, and cuts f's links to both peers.
func isolate(t *testing.T, ctx context.Context, cl *embedetcd.Cluster, f int) *isolation {
	t.Helper()
	rl := clientFor(t, cl, cl.Members()[f].Endpoint()).Watch(clientv3.WithRequireLeader(ctx), "facts/require-leader", clientv3.WithCreatedNotify())
	select {
	case wr := <-rl:
		if !wr.Created {
			t.Fatalf("the leader-requiring watch's first answer is not its creation: %+v", wr)
		}
	case <-ctx.Done():
		t.Fatalf("the leader-requiring watch was never created")
	}
	for i := range 3 {
		if i != f {
			if err := cl.CutLink(f, i); err != nil {
				t.Fatalf("cut %d-%d: %v", f, i, err)
			}
		}
	}
	return &isolation{cl: cl, f: f, rl: rl}
}

// waitNoLeader waits until etcd ends the leader-requiring watch for want
// of a leader, and fails the test if it ends any other way.
func (is *isolation) waitNoLeader(t *testing.T, ctx context.Context) {
	t.Helper()
	for {
		select {
		case wr, ok := <-is.rl:
			if err := wr.Err(); err != nil || !ok {
				if !errors.Is(err, rpctypes.ErrNoLeader) && rpctypes.ErrorDesc(err) != rpctypes.ErrNoLeader.Error() {
					t.Fatalf("the leader-requiring watch on the cut-off member ended with %v, want %v", err, rpctypes.ErrNoLeader)
				}
				return
			}
		case <-ctx.Done():
			t.Fatalf("the leader-requiring watch on the cut-off member never ended: %v", ctx.Err())
		}
	}
}

// mend lets f talk to its peers again.
func (is *isolation) mend(t *testing.T) {
	t.Helper()
	for i := range 3 {
		if i != is.f {
			if err := is.cl.MendLink(is.f, i); err != nil {
				t.Fatalf("mend %d-%d: %v", is.f, i, err)
			}
		}
	}
}

// retry runs op until it succeeds: a write on the majority's side can meet
// a raft election there on a loaded machine, and each op here is safe to
// repeat.
func retry(t *testing.T, ctx context.Context, what string, op func() error) {
	t.Helper()
	for {
		err := op()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v (last error %v)", what, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

const cutoffPage = "update content/lessons/10-failure-modes-and-security/lesson.md, \"A waiter on a cut-off member\", " +
	"and quiz l10-require-leader"

// cutoffWaiters is a lock held and an election led on the majority's side
// of a 3-member cluster, with a Mutex waiter, an Election candidate and an
// Election observer attached to member f only, which the test then cuts
// off.
type cutoffWaiters struct {
	cl     *embedetcd.Cluster
	f      int
	om     *concurrency.Mutex
	le     *concurrency.Election
	locked chan error                   // the waiter's Lock result
	won    chan error                   // the candidate's Campaign result
	ce     *concurrency.Election        // the candidate
	obs    <-chan *clientv3.GetResponse // the observer's reports
}

// startCutoffWaiters sets the scene; wrap makes the context that the
// waiters' Lock, Campaign and Observe get from the test's.
func startCutoffWaiters(t *testing.T, ctx context.Context, wrap func(context.Context) context.Context) *cutoffWaiters {
	t.Helper()
	cl, f, others := startTrio(t, ctx)
	w := &cutoffWaiters{cl: cl, f: f, locked: make(chan error, 1), won: make(chan error, 1)}
	mc := clientFor(t, cl, others...)
	fc := clientFor(t, cl, cl.Members()[f].Endpoint())
	watches := watchCreations(fc)
	ms, err := concurrency.NewSession(mc, concurrency.WithTTL(30))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	w.om = concurrency.NewMutex(ms, "facts/cutoff-lock")
	if err := w.om.Lock(ctx); err != nil {
		t.Fatalf("owner lock: %v", err)
	}
	w.le = concurrency.NewElection(ms, "facts/cutoff-election")
	if err := w.le.Campaign(ctx, "first"); err != nil {
		t.Fatalf("campaign: %v", err)
	}
	// The waiter's lease outlasts the test: only the missing events can
	// keep it waiting.
	fs, err := concurrency.NewSession(fc, concurrency.WithTTL(60))
	if err != nil {
		t.Fatalf("session on the member to cut off: %v", err)
	}
	go func() { w.locked <- concurrency.NewMutex(fs, "facts/cutoff-lock").Lock(wrap(ctx)) }()
	watches.waitCreated(t, ctx, w.om.Key())
	w.ce = concurrency.NewElection(fs, "facts/cutoff-election")
	go func() { w.won <- w.ce.Campaign(wrap(ctx), "candidate") }()
	watches.waitCreated(t, ctx, w.le.Key())
	w.obs = concurrency.NewElection(fs, "facts/cutoff-election").Observe(wrap(ctx))
	if r, ok := <-w.obs; !ok || string(r.Kvs[0].Value) != "first" {
		t.Fatalf("the observer's first report: %v, %v (the test's setup)", r, ok)
	}
	watches.waitCreated(t, ctx, w.le.Key())
	return w
}

// cutAndRelease cuts f off, then releases the lock and proclaims a new
// value on the majority's side, and returns once f has gone three
// election timeouts without a leader.
func (w *cutoffWaiters) cutAndRelease(t *testing.T, ctx context.Context) *isolation {
	t.Helper()
	cut := isolate(t, ctx, w.cl, w.f)
	retry(t, ctx, "unlock on the majority's side", func() error { return w.om.Unlock(ctx) })
	retry(t, ctx, "proclaim on the majority's side", func() error { return w.le.Proclaim(ctx, "second") })
	cut.waitNoLeader(t, ctx)
	return cut
}

// Lesson 10-failure-modes-and-security, page "A waiter on a cut-off
// member" (and quiz l10-require-leader), says the concurrency package
// opens its watches without WithRequireLeader: a Mutex waiter and an
// Election observer attached to a member cut off from the raft leader get
// no event and no error while the rest of the cluster releases the lock
// and changes the leader's value, although etcd has ended a watch that
// asked for a leader on the same member; once the member is back, both
// hear what they missed.
func TestConcurrencyWatchesIgnoreALostLeader(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	w := startCutoffWaiters(t, ctx, func(c context.Context) context.Context { return c })
	cut := w.cutAndRelease(t, ctx)
	select {
	case err := <-w.locked:
		t.Errorf("the waiter on the cut-off member returned from Lock (%v) before the member was back: %s", err, cutoffPage)
	default:
	}
	select {
	case r, ok := <-w.obs:
		t.Errorf("the observer on the cut-off member reported %v (open %v) before the member was back: %s", r, ok, cutoffPage)
	case err := <-w.won:
		t.Errorf("the candidate on the cut-off member returned from Campaign (%v): %s", err, cutoffPage)
	default:
	}
	cut.mend(t)
	select {
	case err := <-w.locked:
		if err != nil {
			t.Errorf("the waiter's Lock returned %v once its member was back, want nil: a watch that had required "+
				"a leader would have ended with an error instead: %s", err, cutoffPage)
		}
	case <-ctx.Done():
		t.Fatalf("the waiter never got the lock after its member was back: %s", cutoffPage)
	}
	select {
	case r, ok := <-w.obs:
		if !ok || string(r.Kvs[0].Value) != "second" {
			t.Errorf("once its member was back the observer reported %v (open %v), want the value \"second\": %s", r, ok, cutoffPage)
		}
	case <-ctx.Done():
		t.Fatalf("the observer never reported the new value after its member was back: %s", cutoffPage)
	}
}

// The same page's remedy and its limit: a context made with
// clientv3.WithRequireLeader reaches the concurrency package's watches, so
// on the cut-off member Observe's channel closes and Campaign returns
// ErrNoLeader, leaving its key (etcd issue 21128), without the member
// coming back. Lock's wait ends the same way, but its clean-up delete is
// sent with the client's own context and waits for a leader: Lock is
// still waiting after the server's own request timeout (5 s + 2 election
// timeouts) and returns ErrNoLeader only once the member is back.
func TestRequireLeaderContextReachesTheWaiters(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	w := startCutoffWaiters(t, ctx, clientv3.WithRequireLeader)
	cut := w.cutAndRelease(t, ctx)
	select {
	case r, ok := <-w.obs:
		if ok {
			t.Errorf("Observe with a leader-requiring context reported %v on the cut-off member, want its channel closed: %s",
				r, cutoffPage)
		}
	case <-ctx.Done():
		t.Fatalf("Observe's channel with a leader-requiring context stayed open on the cut-off member: %s", cutoffPage)
	}
	select {
	case err := <-w.won:
		if !errors.Is(err, rpctypes.ErrNoLeader) || w.ce.Key() == "" {
			t.Errorf("Campaign with a leader-requiring context returned %v (key %q) on the cut-off member, "+
				"want %v with its key kept: %s", err, w.ce.Key(), rpctypes.ErrNoLeader, cutoffPage)
		}
	case <-ctx.Done():
		t.Fatalf("Campaign with a leader-requiring context never returned on the cut-off member: %s", cutoffPage)
	}
	reqTimeout := 5*time.Second + 2*time.Duration(embedetcd.ClusterTicks.ElectionMs)*time.Millisecond
	select {
	case err := <-w.locked:
		t.Errorf("Lock with a leader-requiring context returned %v on the cut-off member; the page says its "+
			"clean-up waits for a leader: %s", err, cutoffPage)
	case <-time.After(reqTimeout + time.Second):
	}
	cut.mend(t)
	select {
	case err := <-w.locked:
		if !errors.Is(err, rpctypes.ErrNoLeader) {
			t.Errorf("once its member was back, Lock with a leader-requiring context returned %v, want %v: %s",
				err, rpctypes.ErrNoLeader, cutoffPage)
		}
	case <-ctx.Done():
		t.Fatalf("Lock with a leader-requiring context never returned, even after its member was back: %s", cutoffPage)
	}
}

// Lesson 10-failure-modes-and-security, page "Watch events come from your
// member" (and quiz l10-watch-lag), says a watch hears a change only when
// the member it is connected to has applied it: the same write reaches a
// watcher on the majority's side at once, while a watcher on a member
// that is behind (here cut off, lag at its largest) hears nothing and
// that member's serializable read still shows the old value; the event
// comes, the same revision, once the member catches up.
func TestWatchEventsComeFromYourMember(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	const where = "update content/lessons/10-failure-modes-and-security/lesson.md, \"Watch events come from your member\", " +
		"and quiz l10-watch-lag"
	const key = "facts/lagging-watch"
	cl, f, others := startTrio(t, ctx)
	mc := clientFor(t, cl, others...)
	fc := clientFor(t, cl, cl.Members()[f].Endpoint())
	put, err := mc.Put(ctx, key, "old")
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	watch := func(cli *clientv3.Client) clientv3.WatchChan {
		wc := cli.Watch(ctx, key, clientv3.WithRev(put.Header.Revision+1), clientv3.WithCreatedNotify())
		if wr := <-wc; !wr.Created {
			t.Fatalf("the watch's first answer is not its creation: %+v", wr)
		}
		return wc
	}
	near, far := watch(mc), watch(fc)

	cut := isolate(t, ctx, cl, f)
	retry(t, ctx, "write on the majority's side", func() error {
		_, err := mc.Txn(ctx).If(clientv3.Compare(clientv3.Value(key), "=", "old")).
			Then(clientv3.OpPut(key, "new")).Commit()
		return err
	})
	ev := nextPut(t, ctx, near, "the majority's watch")
	heard := time.Now()
	cut.waitNoLeader(t, ctx)
	select {
	case wr := <-far:
		t.Errorf("the watch on the cut-off member heard %v before the member was back: %s", wr.Events, where)
	default:
	}
	r, err := fc.Get(ctx, key, clientv3.WithSerializable())
	if err != nil {
		t.Fatalf("serializable get on the cut-off member: %v", err)
	}
	if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "old" || r.Header.Revision >= ev.Kv.ModRevision {
		t.Errorf("the cut-off member's serializable read gave %v at revision %d, want \"old\" below revision %d: %s",
			r.Kvs, r.Header.Revision, ev.Kv.ModRevision, where)
	}
	cut.mend(t)
	late := nextPut(t, ctx, far, "the cut-off member's watch")
	if late.Kv.ModRevision != ev.Kv.ModRevision || string(late.Kv.Value) != "new" {
		t.Errorf("once back, the member's watch heard %q at revision %d, want the same event as the majority's "+
			"(\"new\" at %d): %s", late.Kv.Value, late.Kv.ModRevision, ev.Kv.ModRevision, where)
	}
	t.Logf("the cut-off member's watcher heard the write %v after the majority's", time.Since(heard).Round(10*time.Millisecond))
}

// nextPut waits for the next event on wc and returns it; it must be a PUT.
func nextPut(t *testing.T, ctx context.Context, wc clientv3.WatchChan, what string) *clientv3.Event {
	t.Helper()
	select {
	case wr, ok := <-wc:
		if !ok || wr.Err() != nil || len(wr.Events) == 0 || wr.Events[0].Type != clientv3.EventTypePut {
			t.Fatalf("%s ended or answered without a PUT: %+v (err %v)", what, wr, wr.Err())
		}
		return wr.Events[0]
	case <-ctx.Done():
		t.Fatalf("%s heard nothing: %v", what, ctx.Err())
	}
	return nil
}
