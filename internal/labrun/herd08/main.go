// Command herd08 is one replica of lab 08 under a lab run: it takes turns
// at a lock through the learner's queue (labs/08_herd's Enqueue and
// WaitTurn, or the reference through a build overlay). A holder writes to
// the playground's fenced resource with its ticket's revision as the
// token, lets go by deleting its key and joins the line again; a waiter
// that has waited longer than its patience leaves the line and joins it
// again at the back, so that a key in the middle of the line goes while
// others wait behind it. One waiter, r1, is patient: it waits out a fault
// longer than its lease (the waiter schedules aim at it). It is built and
// started by internal/labrun, never by hand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/internal/labrun/replica"
	"github.com/ownership-election/playground/labs"
	herd "github.com/ownership-election/playground/labs/08_herd"
)

const (
	// holdWrites writes, writeEvery apart, make one turn at the lock.
	holdWrites = 2
	writeEvery = 100 * time.Millisecond
	// rest is the pause between a release and joining the line again.
	rest = 100 * time.Millisecond
	// patience is how long a waiter waits for its turn before it leaves
	// the line: patienceBase for r2 and patienceStep more for each next
	// replica, so that two waiters that joined together do not leave
	// together. Without faults three replicas wait at most two turns
	// (under half a second); when the holder is paused, cut off or
	// crashed its key outlives it by at least two thirds of a TTL (the
	// lease was renewed at most a third of a TTL before), so with TTL 2 s
	// waiters leave while etcd still holds the old holder's key, and the
	// one behind a leaver must not take that for its turn.
	patienceBase = 600 * time.Millisecond
	patienceStep = 200 * time.Millisecond
	// r1 waits patientTTLs TTLs and patientMore besides: longer than a
	// waiter schedule keeps it from etcd (2 TTLs), so that it is still in
	// WaitTurn when its network comes back after its lease ran out, and
	// longer than the checker's bound on a turn not taken (2 TTLs + 2 s),
	// so that a waiter that missed its turn is seen missing it.
	patientTTLs = 3
	patientMore = 2 * time.Second
	// callTimeout bounds the runner's own requests (the release, the
	// check of the key at a turn).
	callTimeout = time.Second
)

// Returned is the note that tells the playground the replica's loop
// returned once it was told to stop.
const Returned = "the queue loop returned"

func main() { os.Exit(run()) }

func run() int {
	p, code := replica.Start()
	if p == nil {
		return code
	}
	defer p.Close()
	w := &waiter{conn: p.Conn, cli: p.Client, cfg: p.Config, patience: patienceFor(p.Config.Name, p.Config.TTL)}
	w.spy = replica.NewSpy(p.Client.KV)
	p.Client.KV = w.spy
	p.Client.Watcher = &wakeSpy{Watcher: p.Client.Watcher, conn: p.Conn}
	p.Conn.Emit(replica.Event{Kind: "running", Text: "joining the line through the lab's Enqueue and WaitTurn"})
	return p.Finish(w.loop(p.Ctx), replica.Ending{Call: "Enqueue or WaitTurn", Stopped: Returned + " after its context ended"})
}

// waiter is one replica's side of the queue.
type waiter struct {
	conn *replica.Conn
	cli  *clientv3.Client // its KV is spy, for the lab's code
	spy  *replica.Spy
	cfg  replica.Config
	n    int // writes so far

	patience time.Duration
}

// patienceFor is the patience of replica name (r1, r2, ...) with leases
// of ttl seconds.
func patienceFor(name string, ttl int) time.Duration {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "r"))
	if err != nil || i <= 1 {
		return time.Duration(patientTTLs*ttl)*time.Second + patientMore
	}
	return patienceBase + time.Duration(i-2)*patienceStep
}

// loop takes turns, one session (lease) at a time, until ctx ends or the
// lab's code is not written.
func (w *waiter) loop(ctx context.Context) error {
	for ctx.Err() == nil {
		s, err := concurrency.NewSession(w.cli, concurrency.WithTTL(w.cfg.TTL), concurrency.WithContext(ctx))
		if err != nil {
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		w.note("lease-granted", fmt.Sprintf("lease %x granted (TTL %d s)", int64(s.Lease()), w.cfg.TTL), nil)
		err = w.turns(ctx, s)
		closeSession(s)
		if errors.Is(err, labs.ErrNotImplemented) {
			return err
		}
		sleep(ctx, rest)
	}
	return nil
}

// turns joins the line and takes its turns with one lease, until the
// lease is lost, the ticket is, or ctx ends.
func (w *waiter) turns(ctx context.Context, s *concurrency.Session) error {
	for ctx.Err() == nil {
		select {
		case <-s.Done():
			w.note("note", "the session ended (keep-alives lost): starting over with a new lease", nil)
			return nil
		default:
		}
		t, err := herd.Enqueue(ctx, w.cli, w.cfg.Prefix, s.Lease())
		if errors.Is(err, labs.ErrNotImplemented) {
			return err
		}
		if err != nil {
			w.note("note", "Enqueue failed: "+err.Error(), &replica.Facts{Op: "enqueue", Err: err.Error()})
			return nil
		}
		w.note("note", fmt.Sprintf("in line: Enqueue gave key %s, revision %d", t.Key, t.Rev),
			&replica.Facts{Op: "enqueue", Key: t.Key, Revision: t.Rev, Succeeded: true})
		again, err := w.wait(ctx, s, t)
		if err != nil || !again {
			return err
		}
	}
	return nil
}

// wait waits for t's turn and, when it comes, holds the lock. It says
// whether to join the line again with the same lease.
func (w *waiter) wait(ctx context.Context, s *concurrency.Session, t herd.Ticket) (bool, error) {
	wctx, cancel := context.WithTimeout(ctx, w.patience)
	w.spy.Take()
	err := herd.WaitTurn(wctx, w.cli, w.cfg.Prefix, t)
	read := replica.Last(w.spy.Take())
	cancel()
	switch {
	case errors.Is(err, labs.ErrNotImplemented):
		return false, err
	case err == nil:
		w.lastRead(t, read)
		return w.hold(ctx, s, t), nil
	case ctx.Err() != nil:
		return false, nil
	case errors.Is(err, herd.ErrTicketLost):
		w.ticketLost(ctx, t)
		return false, nil
	case wctx.Err() != nil:
		w.leave(ctx, t, fmt.Sprintf("gave up after waiting %s: leaving the line", w.patience))
	default:
		w.leave(ctx, t, "WaitTurn failed ("+err.Error()+"): leaving the line")
	}
	sleep(ctx, rest)
	return true, nil
}

// hold is a turn at the lock: look up the key (the revision the checker
// judges the turn at), write with the ticket's revision as the token, then
// let go. It says whether the lease is still good for another turn.
func (w *waiter) hold(ctx context.Context, s *concurrency.Session, t herd.Ticket) bool {
	f := &replica.Facts{Op: "turn", Key: t.Key}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	if r, err := w.cli.Get(cctx, t.Key); err == nil {
		f.Revision, f.Succeeded = r.Header.Revision, len(r.Kvs) > 0
	} else {
		f.Err = err.Error()
	}
	cancel()
	w.conn.Emit(replica.Event{Kind: "acquired", Token: t.Rev, Facts: f,
		Text: fmt.Sprintf("WaitTurn returned nil: holding the lock with key %s, token %d", t.Key, t.Rev)})
	for i := 0; i < holdWrites; i++ {
		if !alive(ctx, s) {
			break
		}
		w.n++
		if _, err := w.conn.Write(t.Rev, fmt.Sprintf("%s#%d", w.cfg.Name, w.n)); err != nil {
			break
		}
		sleep(ctx, writeEvery)
	}
	if !alive(ctx, s) {
		w.conn.Emit(replica.Event{Kind: "stepped-down", Token: t.Rev, Text: fmt.Sprintf("stopped writing with token %d: the session or the run ended", t.Rev)})
		if ctx.Err() != nil {
			w.leave(context.Background(), t, "releasing the lock on the way out")
		}
		return false
	}
	w.conn.Emit(replica.Event{Kind: "stepped-down", Token: t.Rev, Text: fmt.Sprintf("done with the lock (token %d): releasing it", t.Rev)})
	w.leave(ctx, t, "released the lock")
	sleep(ctx, rest)
	return true
}

// lastRead reports the revision of the last answer WaitTurn had from
// etcd before it gave the turn: what its code saw when it decided, which
// the checker compares with its watch (a turn taken on a read that no
// longer showed the waiter's own key is a turn without a place in line).
func (w *waiter) lastRead(t herd.Ticket, rev int64) {
	if rev == 0 {
		return
	}
	w.note("note", fmt.Sprintf("WaitTurn's last answer from etcd was at revision %d", rev), &replica.Facts{Op: "turn-read", Key: t.Key, Revision: rev, Succeeded: true})
}

// ticketLost reports WaitTurn's ErrTicketLost with what etcd holds at
// our key, for the checker to compare with its watch.
func (w *waiter) ticketLost(ctx context.Context, t herd.Ticket) {
	f := &replica.Facts{Op: "ticket-lost", Key: t.Key}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	if r, err := w.cli.Get(cctx, t.Key); err == nil {
		f.Revision, f.Succeeded = r.Header.Revision, len(r.Kvs) > 0
	} else {
		f.Err = err.Error()
	}
	cancel()
	w.note("note", fmt.Sprintf("WaitTurn returned ErrTicketLost for %s: starting over with a new lease", t.Key), f)
}

// leave deletes our key if it is still the one created at t.Rev.
func (w *waiter) leave(ctx context.Context, t herd.Ticket, why string) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	f := &replica.Facts{Op: "leave", Key: t.Key}
	r, err := w.cli.Txn(cctx).
		If(clientv3.Compare(clientv3.CreateRevision(t.Key), "=", t.Rev)).
		Then(clientv3.OpDelete(t.Key)).Commit()
	if err != nil {
		f.Err = err.Error()
		why += " (the delete failed: " + err.Error() + ")"
	} else {
		f.Revision, f.Succeeded = r.Header.Revision, r.Succeeded
	}
	w.note("note", why, f)
}

func (w *waiter) note(kind, text string, f *replica.Facts) {
	w.conn.Emit(replica.Event{Kind: kind, Text: text, Facts: f})
}

func alive(ctx context.Context, s *concurrency.Session) bool {
	select {
	case <-s.Done():
		return false
	default:
		return ctx.Err() == nil
	}
}

// closeSession revokes the lease, bounded, whatever state the run is in.
func closeSession(s *concurrency.Session) {
	s.Orphan()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	s.Client().Revoke(ctx, s.Lease())
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
