package herd

// Grader for lab 08. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness). A spy between
// the waiters' client and etcd counts reads, watches and wake-ups.
//
// Wrong solutions these tests defend against (the ones marked [mutant] are
// kept in solutions/08_herd/testdata/mutants and run by labcheck):
//   - every waiter watching the owner's key (or the whole prefix) [mutant
//     watch_owner.patch]: Step 2 counts about 10 wake-ups per release, not 1.
//   - polling with Get in a loop [mutant poll.patch]: Step 2 (no watch, and
//     the reads grow with time instead of with releases).
//   - taking the turn as soon as the predecessor's key is deleted, without
//     looking again [mutant assume_turn.patch]: Step 3 kills a middle waiter
//     and its successor must not jump the queue.
//   - never checking the waiter's own key [mutant no_own_check.patch]: Step 3
//     (the killed waiter takes a turn it no longer has).
//   - a queue key without the lease, or a place that is not the key's
//     CreateRevision: Step 1.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs/internal/etcdharness"
)

func TestMain(m *testing.M) { os.Exit(etcdharness.Main(m)) }

func TestStep1_EnqueueTakesAPlace(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cli := env.Client()
	prefix := env.Key("queue")
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
			t.Fatalf("Enqueue #%d returned key %q (exists=%v), want %q", i, tk.Key, ok, want)
		}
		if kv.Lease != l {
			t.Fatalf("queue key %s is attached to lease %x, want %x", want, int64(kv.Lease), int64(l))
		}
		if tk.Rev != kv.CreateRevision {
			t.Fatalf("ticket Rev = %d, want the key's CreateRevision %d", tk.Rev, kv.CreateRevision)
		}
		tickets = append(tickets, tk)
	}
	if again, err := Enqueue(env.Ctx, cli, prefix, leases[1]); err != nil || again != tickets[1] {
		t.Fatalf("enqueueing the same lease again = (%+v, %v), want the same ticket %+v", again, err, tickets[1])
	}
	if err := WaitTurn(env.Ctx, cli, prefix, tickets[0]); err != nil {
		t.Fatalf("WaitTurn for the first in line: %v, want nil at once", err)
	}
	// The second waits while the first holds the lock ...
	ctx, cancel := context.WithTimeout(env.Ctx, 200*time.Millisecond)
	err := WaitTurn(ctx, cli, prefix, tickets[1])
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitTurn for the second in line while the first holds the lock = %v, want it to block until its context ends (context.DeadlineExceeded)", err)
	}
	// ... and goes once the first is released.
	if _, err := env.Admin.Delete(env.Ctx, tickets[0].Key); err != nil {
		t.Fatal(err)
	}
	if err := WaitTurn(env.Ctx, cli, prefix, tickets[1]); err != nil {
		t.Fatalf("WaitTurn after the first released: %v", err)
	}
}

func TestStep2_OneWakeUpPerRelease(t *testing.T) {
	t.Parallel()
	const n = 20
	env := etcdharness.New(t)
	q := newQueue(t, env, n)
	q.waitAllWatching(n)
	gets, wakes := q.spy.Gets.Load(), q.spy.WakeUps.Load()

	q.release(q.holder)
	for i := range n {
		q.expect(i, nil)
		q.release(q.tickets[i])
	}
	// Every waiter has returned, so the counts are final.
	dg, dw := q.spy.Gets.Load()-gets, q.spy.WakeUps.Load()-wakes
	t.Logf("%d releases: %d wake-ups, %d reads", n, dw, dg)
	if dw > 2*n {
		t.Errorf("%d releases woke waiters %d times (about %.1f per release); watch only your predecessor so a release wakes one waiter", n, dw, float64(dw)/n)
	}
	if dg > 3*n {
		t.Errorf("%d releases caused %d reads (about %.1f per release); read once per wake-up, never in a polling loop", n, dg, float64(dg)/n)
	}
}

func TestStep3_KilledWaiterRetargets(t *testing.T) {
	t.Parallel()
	const n, victim = 10, 4
	env := etcdharness.New(t)
	q := newQueue(t, env, n)
	q.waitAllWatching(n)

	// Waiter 4 dies: its lease is revoked, its key vanishes. Waiter 5 is
	// woken and must find waiter 3 ahead of it and watch that instead.
	watches := q.spy.Watches.Load()
	env.Revoke(q.leases[victim])
	deadline := time.After(5 * time.Second)
	for q.spy.Watches.Load() == watches {
		select {
		case r := <-q.results:
			q.t.Fatalf("waiter %d returned (%v) when waiter %d died, while the holder and waiters 0..%d are still ahead: after a wake-up, look again for the key just ahead of yours", r.i, r.err, victim, victim-1)
		case <-deadline:
			q.t.Fatalf("waiter %d died and waiter %d did not start watching a new predecessor within 5 s", victim, victim+1)
		case <-time.After(5 * time.Millisecond):
		}
	}

	q.release(q.holder)
	for i := range victim {
		q.expect(i, nil)
		q.release(q.tickets[i])
	}
	// Waiter 3's release wakes waiter 5 (now its successor) and the dead
	// waiter 4, which must notice that its own key is gone.
	got := map[int]error{}
	for range 2 {
		r := q.next()
		got[r.i] = r.err
	}
	if err, ok := got[victim]; !ok || !errors.Is(err, ErrTicketLost) {
		t.Fatalf("after its predecessor left, the dead waiter %d returned (%v, returned=%v), want ErrTicketLost", victim, err, ok)
	}
	if err, ok := got[victim+1]; !ok || err != nil {
		t.Fatalf("waiter %d got (%v, returned=%v), want its turn (nil)", victim+1, err, ok)
	}
	q.release(q.tickets[victim+1])
	for i := victim + 2; i < n; i++ {
		q.expect(i, nil)
		q.release(q.tickets[i])
	}
}

// queue is a lock held by the test (holder) with n waiters in line behind
// it, each calling WaitTurn through one spied client.
type queue struct {
	t       *testing.T
	env     *etcdharness.Env
	spy     *etcdharness.Spy
	holder  Ticket
	tickets []Ticket
	leases  []clientv3.LeaseID
	results chan result
}

type result struct {
	i   int
	err error
}

func newQueue(t *testing.T, env *etcdharness.Env, n int) *queue {
	cli := env.Client()
	q := &queue{t: t, env: env, spy: etcdharness.Attach(cli), results: make(chan result, n)}
	prefix := env.Key("queue")
	q.holder = q.enqueue(prefix)
	q.leases = make([]clientv3.LeaseID, n)
	for i := range n {
		q.leases[i] = env.Grant(30)
		q.tickets = append(q.tickets, q.enqueueWith(prefix, q.leases[i]))
	}
	for i, tk := range q.tickets {
		go func() { q.results <- result{i, WaitTurn(env.Ctx, cli, prefix, tk)} }()
	}
	return q
}

// enqueueWith makes a queue key the way the README describes (the test
// does not depend on your Enqueue here).
func (q *queue) enqueueWith(prefix string, lease clientv3.LeaseID) Ticket {
	key := fmt.Sprintf("%s/%x", prefix, int64(lease))
	resp, err := q.env.Admin.Put(q.env.Ctx, key, "", clientv3.WithLease(lease))
	if err != nil {
		q.t.Fatalf("test setup: enqueue %s: %v", key, err)
	}
	return Ticket{Key: key, Rev: resp.Header.Revision}
}

func (q *queue) enqueue(prefix string) Ticket { return q.enqueueWith(prefix, q.env.Grant(30)) }

// waitAllWatching waits until the waiters have opened n watches between
// them, i.e. every one of them is waiting on something.
func (q *queue) waitAllWatching(n int) {
	deadline := time.After(5 * time.Second)
	for q.spy.Watches.Load() < int64(n) {
		select {
		case r := <-q.results:
			q.t.Fatalf("waiter %d returned (%v) although the lock is held and it is not first in line", r.i, r.err)
		case <-deadline:
			q.t.Fatalf("after 5 s the %d waiters had opened %d watches: wait with a watch, not by polling", n, q.spy.Watches.Load())
		case <-time.After(5 * time.Millisecond):
		}
	}
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

// expect checks that the next waiter to return is i, with err.
func (q *queue) expect(i int, err error) {
	q.t.Helper()
	r := q.next()
	if r.i != i || !errors.Is(r.err, err) {
		q.t.Fatalf("waiter %d returned (%v); the turn belongs to waiter %d (want %v): waiters must go in the order they queued, one at a time", r.i, r.err, i, err)
	}
}
