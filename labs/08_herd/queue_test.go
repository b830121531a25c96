package herd

// Grader for lab 7.3. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness). A spy between
// the waiters' client and etcd counts reads, watches and wake-ups, and
// records which keys are being watched.
//
// Wrong solutions these tests defend against (planted mutants live in
// solutions/08_herd/testdata/mutants, learner bugs in testdata/bugs; labcheck
// runs both):
//   - every waiter watching the owner's key (or the whole prefix): Step 2
//     counts about 10 wake-ups per release, not 1.
//   - polling with Get in a loop: Step 2 (no watch, and the reads grow with
//     time instead of with releases).
//   - a watch that starts "now" instead of at the read's revision + 1: Step
//     2 releases the predecessor between the read and the watch (lost
//     wake-up), and the waiter never returns.
//   - a watch that is never cancelled: Step 2 counts the watches still open
//     once every waiter has returned.
//   - taking the turn as soon as the predecessor's key is deleted, without
//     looking again: Step 3 kills a middle waiter and its successor must
//     not jump the queue.
//   - never checking the waiter's own key: Step 3 (the killed waiter takes
//     a turn it no longer has).
//   - a closed watch channel taken for a turn: Step 3 closes a
//     waiter's client, and WaitTurn must return an error, not nil.
//   - ignoring ctx (context.Background() in a call): Step 1 bounds WaitTurn
//     after its context ends, also while etcd is unreachable.
//   - reading prefix instead of prefix+"/": Step 1 puts an older key in a
//     queue whose name starts with the same letters.
//   - a queue key without the lease, a plain put, or a place that is not
//     the key's CreateRevision: Step 1.
//
// A waiter that also watches its own key and returns ErrTicketLost as soon
// as that key goes is correct and passes (Step 3 accepts the early return).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs/internal/etcdharness"
)

// Every subtest may run at once: they wait on etcd, not on the processor.
func TestMain(m *testing.M) { os.Exit(etcdharness.MainParallel(m, 16)) }

// returnBound is how long WaitTurn may take to return once it has a reason
// to (its context ended, its client closed, its predecessor went). A
// correct solution needs a few milliseconds.
const returnBound = 2 * time.Second

// closeBound is returnBound for a closed client: a read that is on its
// way when the client closes can take clientv3 about 2.6 s to fail.
const closeBound = 5 * time.Second

func TestStep1_EnqueueTakesAPlace(t *testing.T) {
	t.Parallel()
	t.Run("join and wait", func(t *testing.T) { t.Parallel(); testJoinAndWait(t) })
	t.Run("cancel while etcd is unreachable", func(t *testing.T) { t.Parallel(); testCancelWhileUnreachable(t) })
	t.Run("same lease joins between requests", func(t *testing.T) { t.Parallel(); testEnqueueCompetitor(t) })
}

func TestStep2_OneWakeUpPerRelease(t *testing.T) {
	t.Parallel()
	t.Run("20 releases", func(t *testing.T) { t.Parallel(); testOneWakeUpPerRelease(t) })
	t.Run("release between read and watch", func(t *testing.T) { t.Parallel(); testReleaseBeforeWatch(t) })
}

func TestStep3_KilledWaiterRetargets(t *testing.T) {
	t.Parallel()
	t.Run("killed waiter", func(t *testing.T) { t.Parallel(); testKilledWaiterRetargets(t) })
	t.Run("client closed", func(t *testing.T) { t.Parallel(); testClientClosed(t) })
	t.Run("etcd refuses requests", func(t *testing.T) { t.Parallel(); testRefused(t) })
}

// testJoinAndWait: the key, its lease and place, joining twice, the first
// in line going at once, the second waiting and giving up with its
// context.
func testJoinAndWait(t *testing.T) {
	env := etcdharness.New(t)
	cli := env.Client()
	prefix := env.Key("queue")
	// An older key in another queue whose name starts with the same
	// letters: "queue2/..." matches the prefix "queue" but not "queue/".
	neighbour := env.Key("queue2", "old")
	if _, err := env.Admin.Put(env.Ctx, neighbour, "", clientv3.WithLease(env.Grant(30))); err != nil {
		t.Fatalf("test setup: put %s: %v", neighbour, err)
	}
	leases := []clientv3.LeaseID{env.Grant(30), env.Grant(30), env.Grant(30)}
	var tickets []Ticket
	for i, l := range leases {
		tk, err := Enqueue(env.Ctx, cli, prefix, l)
		if err != nil {
			t.Fatalf("Enqueue #%d: %v", i, err)
		}
		want := fmt.Sprintf("%s/%x", prefix, int64(l))
		kv, ok := env.Get(want)
		if tk.Key != want || !ok {
			t.Fatalf("Enqueue #%d returned key %q (exists in etcd: %v), want %q: the key is prefix + \"/\" + the lease ID in hex", i, tk.Key, ok, want)
		}
		if kv.Lease != l {
			t.Fatalf("queue key %s is attached to lease %x, want %x: without the lease a dead waiter's key never goes away", want, int64(kv.Lease), int64(l))
		}
		if tk.Rev != kv.CreateRevision {
			t.Fatalf("ticket Rev = %d, want the key's CreateRevision %d: the place in line is when the key was created", tk.Rev, kv.CreateRevision)
		}
		tickets = append(tickets, tk)
	}
	before, _ := env.Get(tickets[1].Key)
	again, err := Enqueue(env.Ctx, cli, prefix, leases[1])
	if err != nil || again != tickets[1] {
		t.Fatalf("enqueueing the same lease again = (%+v, %v), want the same ticket %+v: the lease already has a place in line", again, err, tickets[1])
	}
	if after, _ := env.Get(tickets[1].Key); after.ModRevision != before.ModRevision {
		t.Fatalf("enqueueing the same lease again rewrote its key (ModRevision %d -> %d): create the key only if it does not exist, in one transaction", before.ModRevision, after.ModRevision)
	}

	ctx, cancel := context.WithTimeout(env.Ctx, returnBound)
	err, done := within(returnBound+time.Second, func() error { return WaitTurn(ctx, cli, prefix, tickets[0]) })
	cancel()
	switch {
	case !done || errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("WaitTurn for the first in line blocked for %v instead of returning nil at once. (The only older key the test made is %s, in another queue whose name starts with the same letters: read the keys under prefix + \"/\", not prefix.)", returnBound, neighbour)
	case err != nil:
		t.Fatalf("WaitTurn for the first in line = %v, want nil at once", err)
	}

	// The second waits while the first holds the lock, and gives up when
	// its context ends ...
	ctx, cancel = context.WithTimeout(env.Ctx, 200*time.Millisecond)
	err, done = within(200*time.Millisecond+returnBound, func() error { return WaitTurn(ctx, cli, prefix, tickets[1]) })
	cancel()
	if !done {
		t.Fatalf("WaitTurn did not return within %v after its context's deadline passed: pass ctx to every etcd call and stop waiting when ctx is done", returnBound)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitTurn for the second in line while the first holds the lock = %v, want it to block until its context ends and return that context's error (context.DeadlineExceeded)%s", err, lostHint(err))
	}
	// ... and goes once the first is released.
	if _, err := env.Admin.Delete(env.Ctx, tickets[0].Key); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(env.Ctx, returnBound)
	err, done = within(returnBound+time.Second, func() error { return WaitTurn(ctx, cli, prefix, tickets[1]) })
	cancel()
	if !done || err != nil {
		t.Fatalf("WaitTurn for the second in line after the first released = %v (returned: %v), want nil at once", err, done)
	}
}

// testEnqueueCompetitor: between any two requests Enqueue sends, the same
// lease joins the queue (a retry of the same join, say). Enqueue must
// still return the key's real place. One transaction is never interrupted.
func testEnqueueCompetitor(t *testing.T) {
	env := etcdharness.New(t)
	prefix := env.Key("queue")
	cli := env.Client()
	spy := etcdharness.Attach(cli)
	lease := env.Grant(30)
	key := fmt.Sprintf("%s/%x", prefix, int64(lease))
	var requests atomic.Int64
	spy.Intercept(func(r etcdharness.Request) error {
		if requests.Add(1) != 2 {
			return nil
		}
		_, err := env.Admin.Txn(env.Ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, "", clientv3.WithLease(lease))).Commit()
		return err
	})
	tk, err := Enqueue(env.Ctx, cli, prefix, lease)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	kv, ok := env.Get(key)
	switch {
	case !ok || tk.Key != key:
		t.Fatalf("Enqueue returned key %q (the key %s exists: %v)", tk.Key, key, ok)
	case tk.Rev != kv.CreateRevision:
		t.Fatalf("Enqueue sent %d requests; between the first two the same lease joined (its key was created at revision %d), and Enqueue returned Rev %d: create the key and learn its place in one transaction (If CreateRevision == 0, Then put, Else get)", requests.Load(), kv.CreateRevision, tk.Rev)
	case kv.ModRevision != kv.CreateRevision:
		t.Fatalf("Enqueue sent %d requests; between the first two the same lease joined, and Enqueue then wrote over its key (ModRevision %d, CreateRevision %d): create the key only if it does not exist, in one transaction", requests.Load(), kv.ModRevision, kv.CreateRevision)
	}
}

// testCancelWhileUnreachable: a waiter whose network is frozen must still
// give up when its context is cancelled, whether it is reading or watching.
func testCancelWhileUnreachable(t *testing.T) {
	env := etcdharness.New(t)
	prefix := env.Key("queue")
	holder := enqueueWith(t, env, prefix, env.Grant(30))
	waiter := enqueueWith(t, env, prefix, env.Grant(30))
	cli, proxy := env.ProxiedClient()
	tr := trackWatches(cli)

	for _, when := range []string{"watching", "reading"} {
		ctx, cancel := context.WithCancel(env.Ctx)
		res := make(chan error, 1)
		if when == "reading" {
			proxy.Freeze() // the read itself cannot get through
		}
		go func() { res <- WaitTurn(ctx, cli, prefix, waiter) }()
		if when == "watching" {
			tr.waitWatching(t, res, returnBound, holder.Key)
			proxy.Freeze()
		} else {
			time.Sleep(50 * time.Millisecond) // let the read be on its way
		}
		cancel()
		select {
		case err := <-res:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("WaitTurn cancelled while %s with etcd unreachable = %v, want context.Canceled", when, err)
			}
		case <-time.After(returnBound):
			t.Fatalf("WaitTurn did not return within %v after its context was cancelled, while it was %s and etcd was unreachable: pass ctx to every etcd call and return its error when one fails (a call on context.Background() waits for the network forever; a loop that retries a failed call never ends)", returnBound, when)
		}
		proxy.Thaw()
	}
}

// testOneWakeUpPerRelease: 20 waiters go in order, each release wakes
// about one, and no watch is left open.
func testOneWakeUpPerRelease(t *testing.T) {
	const n = 20
	env := etcdharness.New(t)
	q := newQueue(t, env, n)
	q.waitAllWatching()
	gets, wakes := q.spy.Reads.Load(), q.spy.WakeUps.Load()

	q.release(q.holder)
	for i := range n {
		q.expect(i, nil)
		q.release(q.tickets[i])
	}
	// Every waiter has returned, so the counts are final.
	dg, dw := q.spy.Reads.Load()-gets, q.spy.WakeUps.Load()-wakes
	t.Logf("%d releases: %d wake-ups, %d reads", n, dw, dg)
	if dw > 2*n {
		t.Errorf("%d releases woke waiters %d times (about %.1f per release); watch only your predecessor so a release wakes one waiter", n, dw, float64(dw)/n)
	}
	if dg > 3*n {
		t.Errorf("%d releases caused %d reads (about %.1f per release); read once per wake-up, never in a polling loop", n, dg, float64(dg)/n)
	}
	q.tr.waitClosed(t, returnBound)
}

// testReleaseBeforeWatch: the predecessor is released after the waiter's
// read and before its watch starts.
func testReleaseBeforeWatch(t *testing.T) {
	env := etcdharness.New(t)
	prefix := env.Key("queue")
	holder := enqueueWith(t, env, prefix, env.Grant(30))
	waiter := enqueueWith(t, env, prefix, env.Grant(30))
	cli := env.Client()
	spy := etcdharness.Attach(cli)
	// Release right after the first read of the queue is answered,
	// whatever the read's shape (a Get, a transaction that reads, Do).
	var once sync.Once
	var released atomic.Int64 // the revision of the release
	spy.After(func(r etcdharness.Request, err error) {
		if err != nil || !r.ReadsUnder(prefix+"/") && !r.ReadsKey(waiter.Key) {
			return
		}
		once.Do(func() {
			resp, err := env.Admin.Delete(env.Ctx, holder.Key)
			if err != nil {
				t.Errorf("release %s: %v", holder.Key, err)
				return
			}
			released.Store(resp.Header.Revision)
		})
	})
	ctx, cancel := context.WithTimeout(env.Ctx, returnBound)
	defer cancel()
	err, done := within(returnBound+time.Second, func() error { return WaitTurn(ctx, cli, prefix, waiter) })
	if !done || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the lock was released (at revision %d) right after WaitTurn's first read of the queue was answered, before its watch started, and WaitTurn was still waiting %v later: a lost wake-up. %s", released.Load(), returnBound, watchStartHint(spy.Watched(), holder.Key, released.Load()))
	}
	if err != nil {
		t.Fatalf("WaitTurn after its predecessor was released = %v, want nil", err)
	}
}

// watchStartHint says where the waiter's watches on key started, against
// the revision at which key was deleted.
func watchStartHint(watched []etcdharness.WatchStart, key string, deleted int64) string {
	for _, w := range watched {
		if !(etcdharness.Access{Key: w.Key, End: w.End}).Covers(key) {
			continue
		}
		switch {
		case w.Rev == 0:
			return fmt.Sprintf("Its watch on %s started at \"now\" (no WithRev), after the delete: start it at the read's revision + 1 (clientv3.WithRev(resp.Header.Revision+1)) so a delete in that gap is delivered", key)
		case w.Rev > deleted:
			return fmt.Sprintf("Its watch on %s started at revision %d, after the delete at %d: start it at the read's revision + 1 (the read was at %d)", key, w.Rev, deleted, w.LastRead)
		default:
			return fmt.Sprintf("Its watch on %s started at revision %d, which includes the delete at %d: look at how the DELETE event is handled", key, w.Rev, deleted)
		}
	}
	return fmt.Sprintf("It opened no watch on %s, the key just ahead of it, and did not read again: watch your predecessor from the read's revision + 1 (clientv3.WithRev), or read again after the watch has started", key)
}

// testKilledWaiterRetargets: a middle waiter dies; its successor must
// watch the next one ahead, and the dead one must report ErrTicketLost.
func testKilledWaiterRetargets(t *testing.T) {
	const n, victim = 10, 4
	env := etcdharness.New(t)
	q := newQueue(t, env, n)
	q.waitAllWatching()

	// Waiter 4 dies: its lease is revoked, its key vanishes. Waiter 5 is
	// woken and must find waiter 3 ahead of it and watch that instead.
	// Waiter 4 may notice at once (if it watches its own key too) or when
	// its predecessor goes; either way it must return ErrTicketLost.
	q.victim = victim
	pred := q.tickets[victim-1].Key
	watched := q.tr.opened(pred)
	env.Revoke(q.leases[victim])
	deadline := time.After(5 * time.Second)
	for q.tr.opened(pred) == watched {
		select {
		case r := <-q.results:
			if q.takeVictim(r) {
				continue
			}
			q.t.Fatalf("waiter %d returned (%v) when waiter %d died, while the holder and waiters 0..%d are still ahead: it jumped the queue. After a wake-up, look again for the key just ahead of yours", r.i, r.err, victim, victim-1)
		case <-deadline:
			q.t.Fatalf("waiter %d died and waiter %d did not start watching its new predecessor (waiter %d's key) within 5 s", victim, victim+1, victim-1)
		case <-time.After(5 * time.Millisecond):
		}
	}

	q.release(q.holder)
	for i := range victim {
		q.expect(i, nil)
		q.release(q.tickets[i])
	}
	// Waiter 3's release gives waiter 5 its turn (and wakes the dead
	// waiter 4 if it is still waiting, which must notice that its own key
	// is gone).
	q.expect(victim+1, nil)
	for !q.victimDone {
		q.takeVictim(q.next())
	}
	if !errors.Is(q.victimErr, ErrTicketLost) {
		t.Fatalf("the dead waiter %d (its lease revoked while it waited) returned %v, want ErrTicketLost", victim, q.victimErr)
	}
	q.release(q.tickets[victim+1])
	for i := victim + 2; i < n; i++ {
		q.expect(i, nil)
		q.release(q.tickets[i])
	}
}

// testClientClosed: a waiter whose client is closed while it waits must
// report an error, never a turn.
func testClientClosed(t *testing.T) {
	env := etcdharness.New(t)
	prefix := env.Key("queue")
	holder := enqueueWith(t, env, prefix, env.Grant(30))
	waiter := enqueueWith(t, env, prefix, env.Grant(30))
	cli := env.Client()
	tr := trackWatches(cli)
	res := make(chan error, 1)
	go func() { res <- WaitTurn(env.Ctx, cli, prefix, waiter) }()
	tr.waitWatching(t, res, returnBound, holder.Key)
	cli.Close()
	select {
	case err := <-res:
		if err == nil {
			t.Fatalf("WaitTurn returned nil after its client was closed, while the lock was still held: it took a turn nobody gave it. A watch channel that closes is not a deletion; return an error")
		}
	case <-time.After(closeBound):
		t.Fatalf("WaitTurn did not return within %v after its etcd client was closed: when the watch channel closes, stop and return an error", closeBound)
	}
}

// lostHint explains an ErrTicketLost returned while the waiter's key was
// still there.
func lostHint(err error) string {
	if !errors.Is(err, ErrTicketLost) {
		return ""
	}
	return ". Its key still exists: read newest first (SortDescend) the keys created at or before your Rev, so your own key comes first and your predecessor second"
}

// errInjected is what a request the test makes fail returns.
var errInjected = errors.New("injected by the test: etcd unavailable")

// testRefused: every request fails. Enqueue must report it; WaitTurn must
// never take a failed read for a turn or for a lost ticket, and may retry
// (with a pause) until its context ends.
func testRefused(t *testing.T) {
	env := etcdharness.New(t)
	prefix := env.Key("queue")
	enqueueWith(t, env, prefix, env.Grant(30)) // holds the lock
	waiter := enqueueWith(t, env, prefix, env.Grant(30))
	lease := env.Grant(30)
	cli := env.Client()
	spy := etcdharness.Attach(cli)
	var refused atomic.Int64
	spy.Intercept(func(etcdharness.Request) error {
		refused.Add(1)
		return errInjected
	})

	ctx, cancel := context.WithTimeout(env.Ctx, time.Second)
	defer cancel()
	var tk Ticket
	err, done := within(time.Second+returnBound, func() (err error) {
		tk, err = Enqueue(ctx, cli, prefix, lease)
		return err
	})
	switch {
	case !done:
		t.Fatalf("Enqueue did not return within %v although etcd refused every request and its context had ended", time.Second+returnBound)
	case err == nil:
		t.Fatalf("Enqueue returned ticket %+v and no error although etcd refused its request: return the error", tk)
	}

	refused.Store(0)
	ctx2, cancel2 := context.WithTimeout(env.Ctx, time.Second)
	defer cancel2()
	err, done = within(time.Second+returnBound, func() error { return WaitTurn(ctx2, cli, prefix, waiter) })
	n := refused.Load()
	switch {
	case !done:
		t.Fatalf("WaitTurn did not return within %v although etcd refused every request and its context had ended after 1 s (%d requests refused): return a failed call's error, or retry after a pause and stop when ctx is done", time.Second+returnBound, n)
	case err == nil:
		t.Fatalf("WaitTurn returned nil although etcd refused its read: a failed read is not a turn; return the error")
	case errors.Is(err, ErrTicketLost):
		t.Fatalf("WaitTurn returned ErrTicketLost although its read failed (%v) and its key still exists: return the read's error instead", errInjected)
	case n > 50:
		t.Fatalf("WaitTurn sent %d requests in the second etcd refused them all: return the error, or retry after a pause, not at once", n)
	}
}

// within runs f and waits at most d for it; done is false if f was still
// running then (it is left running; the test's clients close at the end).
func within(d time.Duration, f func() error) (err error, done bool) {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// enqueueWith makes a queue key the way the README describes (the tests
// of steps 2 and 3 do not depend on your Enqueue).
func enqueueWith(t *testing.T, env *etcdharness.Env, prefix string, lease clientv3.LeaseID) Ticket {
	t.Helper()
	key := fmt.Sprintf("%s/%x", prefix, int64(lease))
	resp, err := env.Admin.Put(env.Ctx, key, "", clientv3.WithLease(lease))
	if err != nil {
		t.Fatalf("test setup: enqueue %s: %v", key, err)
	}
	return Ticket{Key: key, Rev: resp.Header.Revision}
}

// tracker sits on a client's Watcher and KV. It records, per key, how many
// watches were opened and how many are established (etcd confirmed them)
// and not yet closed, and how many KV requests are in flight: a waiter is
// settled when the watch on its predecessor is established and it has no
// request on the way.
type tracker struct {
	clientv3.Watcher
	kv     clientv3.KV
	mu     sync.Mutex
	open   map[string]int // established, not closed
	total  map[string]int // ever opened
	busy   int            // KV requests in flight
	change chan struct{}
}

func trackWatches(cli *clientv3.Client) *tracker {
	tr := &tracker{Watcher: cli.Watcher, kv: cli.KV, open: map[string]int{}, total: map[string]int{}, change: make(chan struct{}, 1)}
	cli.Watcher = tr
	cli.KV = trackedKV{KV: cli.KV, tr: tr}
	return tr
}

func (tr *tracker) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	tr.update(func() { tr.total[key]++ })
	// Ask etcd to confirm the watch, and pass the confirmation on only if
	// the caller asked for it too.
	asked := clientv3.OpGet(key, opts...).IsCreatedNotify()
	in := tr.Watcher.Watch(ctx, key, append(opts, clientv3.WithCreatedNotify())...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		established := false
		defer func() {
			if established {
				tr.update(func() { tr.open[key]-- })
			}
		}()
		defer close(out)
		for resp := range in {
			if resp.Created && !established {
				established = true
				tr.update(func() { tr.open[key]++ })
				if !asked && len(resp.Events) == 0 {
					continue
				}
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				for range in {
				}
				return
			}
		}
	}()
	return out
}

func (tr *tracker) update(f func()) {
	tr.mu.Lock()
	f()
	tr.mu.Unlock()
	select {
	case tr.change <- struct{}{}:
	default:
	}
}

// trackedKV counts the requests in flight.
type trackedKV struct {
	clientv3.KV
	tr *tracker
}

func (k trackedKV) track() func() {
	k.tr.update(func() { k.tr.busy++ })
	return func() { k.tr.update(func() { k.tr.busy-- }) }
}

func (k trackedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	defer k.track()()
	return k.tr.kv.Get(ctx, key, opts...)
}

func (k trackedKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	defer k.track()()
	return k.tr.kv.Put(ctx, key, val, opts...)
}

func (k trackedKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	defer k.track()()
	return k.tr.kv.Delete(ctx, key, opts...)
}

func (k trackedKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	defer k.track()()
	return k.tr.kv.Compact(ctx, rev, opts...)
}

func (k trackedKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	defer k.track()()
	return k.tr.kv.Do(ctx, op)
}

func (k trackedKV) Txn(ctx context.Context) clientv3.Txn {
	return &trackedTxn{Txn: k.tr.kv.Txn(ctx), kv: k}
}

type trackedTxn struct {
	clientv3.Txn
	kv trackedKV
}

func (t *trackedTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *trackedTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *trackedTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }
func (t *trackedTxn) Commit() (*clientv3.TxnResponse, error) {
	defer t.kv.track()()
	return t.Txn.Commit()
}

// opened is how many watches on key were ever opened.
func (tr *tracker) opened(key string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.total[key]
}

const inFlight = "(a request in flight)"

// settled returns "" once every key in keys has an established watch and
// no request is in flight, else the first key without a watch (or "a
// request in flight").
func (tr *tracker) settled(keys ...string) (missing string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, k := range keys {
		if tr.open[k] == 0 {
			return k
		}
	}
	if tr.busy > 0 {
		return inFlight
	}
	return ""
}

// describe says what settled found missing.
func describe(missing string) string {
	if missing == inFlight {
		return "the waiters were still sending requests to etcd"
	}
	return "nobody was watching " + missing + ", the key just ahead of a waiter"
}

func (tr *tracker) stillOpen() (n int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, c := range tr.open {
		n += c
	}
	return n
}

// waitWatching waits until every key in keys has an open watch; a result
// arriving on res first (a waiter that returned) fails the test.
func (tr *tracker) waitWatching(t *testing.T, res <-chan error, d time.Duration, keys ...string) {
	t.Helper()
	deadline := time.After(d)
	for {
		missing := tr.settled(keys...)
		if missing == "" {
			// Still settled a moment later: not just between a watch
			// and the read that follows it.
			time.Sleep(20 * time.Millisecond)
			missing = tr.settled(keys...)
		}
		if missing == "" {
			return
		}
		select {
		case err := <-res:
			t.Fatalf("WaitTurn returned (%v) although the lock is held and the waiter is not first in line%s", err, lostHint(err))
		case <-deadline:
			t.Fatalf("after %v %s: wait with a watch on your predecessor, not by polling", d, describe(missing))
		case <-tr.change:
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitClosed waits until every watch is closed.
func (tr *tracker) waitClosed(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for tr.stillOpen() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("every WaitTurn has returned, but %d of the watches they opened were still open %v later: cancel a watch's context once you stop waiting on it, or every wake-up leaves a stream open on etcd", tr.stillOpen(), d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// queue is a lock held by the test (holder) with n waiters in line behind
// it, each calling WaitTurn through one spied client.
type queue struct {
	t       *testing.T
	env     *etcdharness.Env
	spy     *etcdharness.Spy
	tr      *tracker
	holder  Ticket
	tickets []Ticket
	leases  []clientv3.LeaseID
	results chan result

	victim     int // a waiter that was killed (-1: none)
	victimDone bool
	victimErr  error
}

type result struct {
	i   int
	err error
}

func newQueue(t *testing.T, env *etcdharness.Env, n int) *queue {
	cli := env.Client()
	q := &queue{t: t, env: env, spy: etcdharness.Attach(cli), results: make(chan result, n), victim: -1}
	q.tr = trackWatches(cli)
	prefix := env.Key("queue")
	q.holder = enqueueWith(t, env, prefix, env.Grant(30))
	q.leases = make([]clientv3.LeaseID, n)
	for i := range n {
		q.leases[i] = env.Grant(30)
		q.tickets = append(q.tickets, enqueueWith(t, env, prefix, q.leases[i]))
	}
	for i, tk := range q.tickets {
		go func() { q.results <- result{i, WaitTurn(env.Ctx, cli, prefix, tk)} }()
	}
	return q
}

// waitAllWatching waits until every waiter's predecessor is being watched.
func (q *queue) waitAllWatching() {
	q.t.Helper()
	keys := []string{q.holder.Key}
	for _, tk := range q.tickets[:len(q.tickets)-1] {
		keys = append(keys, tk.Key)
	}
	deadline := time.After(5 * time.Second)
	for {
		missing := q.tr.settled(keys...)
		if missing == "" {
			time.Sleep(20 * time.Millisecond)
			missing = q.tr.settled(keys...)
		}
		if missing == "" {
			return
		}
		select {
		case r := <-q.results:
			q.t.Fatalf("waiter %d returned (%v) although the lock is held and it is not first in line%s", r.i, r.err, lostHint(r.err))
		case <-deadline:
			q.t.Fatalf("after 5 s %s: each waiter waits with a watch on its predecessor, not by polling", describe(missing))
		case <-q.tr.change:
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// takeVictim records r if it is the killed waiter's (first) result.
func (q *queue) takeVictim(r result) bool {
	if r.i != q.victim || q.victimDone {
		return false
	}
	q.victimDone, q.victimErr = true, r.err
	if !errors.Is(r.err, ErrTicketLost) {
		q.t.Fatalf("the dead waiter %d (its lease revoked while it waited) returned %v, want ErrTicketLost: check that your own key still exists after every wake-up", r.i, r.err)
	}
	return true
}

func (q *queue) release(t Ticket) {
	if _, err := q.env.Admin.Delete(q.env.Ctx, t.Key); err != nil {
		q.t.Fatalf("release %s: %v", t.Key, err)
	}
}

func (q *queue) next() result {
	select {
	case r := <-q.results:
		return r
	case <-time.After(5 * time.Second):
		q.t.Fatal("no waiter returned within 5 s of the lock being released")
	}
	panic("unreachable")
}

// expect checks that the next waiter to return (other than the killed
// one) is i, with err.
func (q *queue) expect(i int, err error) {
	q.t.Helper()
	r := q.next()
	for q.takeVictim(r) {
		r = q.next()
	}
	if r.i != i || !errors.Is(r.err, err) {
		q.t.Fatalf("waiter %d returned (%v); the turn belongs to waiter %d (want %v): waiters must go in the order they queued, one at a time", r.i, r.err, i, err)
	}
}
