// Command fenced06 is one replica of lab 06 under a lab run: it takes
// turns with the other replicas at a lock (the playground's own, taken
// and released in one transaction each) and, while it holds it, writes a
// value to etcd with the learner's fencedwrite.Write (labs/06_fenced_write,
// or the reference through a build overlay) ten times, a tenth of a
// second apart. Halfway through a turn it rewrites its lock key's value,
// as an owner may. It is built and started by internal/labrun, never by
// hand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	fencedwrite "github.com/ownership-election/playground/labs/06_fenced_write"

	"github.com/ownership-election/playground/internal/labrun/replica"
	"github.com/ownership-election/playground/labs"
)

const (
	turnWrites = 10                     // writes in one turn with the lock
	rewriteAt  = 3                      // the lock key is rewritten after this many
	writeEvery = 100 * time.Millisecond // between two writes
	rest       = 300 * time.Millisecond // after a turn, before trying again
	waitBound  = 2 * time.Second        // a waiter looks again at least this often
)

func main() { os.Exit(run()) }

func run() int {
	p, code := replica.Start()
	if p == nil {
		return code
	}
	defer p.Close()
	cfg, cli, conn := p.Config, p.Client, p.Conn
	w := &writer{conn: conn, name: cfg.Name, lock: cfg.Prefix + "lock", data: cfg.Prefix + "data", cli: cli, raw: cli.KV,
		leases: replica.NewLeases(cli, conn, cfg.TTL)}
	w.spy = replica.NewSpy(cli.KV)
	cli.KV = w.spy
	conn.Emit(replica.Event{Kind: "running", Text: "the lab's Write started: turns at the lock " + w.lock + ", writes to " + w.data})
	err := notWritten(cli, w.lock, w.data)
	if err == nil {
		err = w.loop(p.Ctx)
	}
	w.leases.Close()
	return p.Finish(err, replica.Ending{Call: "the writer loop", Stopped: "The writer loop returned after its context ended: lock released, lease revoked"})
}

// notWritten asks the lab's Write once with a context already
// cancelled, so that no request can reach etcd: the stub says
// labs.ErrNotImplemented before the replica takes any lock, and any
// other answer means the lab is written.
func notWritten(cli *clientv3.Client, lock, data string) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fencedwrite.Write(ctx, cli, lock, 1<<62, data, "probe"); errors.Is(err, labs.ErrNotImplemented) {
		return err
	}
	return nil
}

// writer is one replica's side of the turns.
type writer struct {
	conn   *replica.Conn
	name   string
	lock   string
	data   string
	cli    *clientv3.Client // its KV is spy, for the lab's code
	raw    clientv3.KV      // the replica's own requests
	spy    *replica.Spy
	leases *replica.Leases
	writes int
}

// loop takes turns until ctx ends.
func (w *writer) loop(ctx context.Context) error {
	for ctx.Err() == nil {
		sess, err := w.leases.Current(ctx)
		if err != nil {
			replica.Sleep(ctx, 200*time.Millisecond)
			continue
		}
		token, ok := w.acquire(ctx, sess.Lease())
		if !ok {
			replica.WaitFree(ctx, w.cli, w.raw, w.lock, waitBound)
			continue
		}
		if err := w.hold(ctx, sess, token); err != nil {
			return err
		}
		replica.Sleep(ctx, rest)
	}
	return nil
}

// acquire takes the lock if it is free, in one transaction: the
// playground's lock, so that only the lab's Write is judged.
func (w *writer) acquire(ctx context.Context, lease clientv3.LeaseID) (int64, bool) {
	actx, cancel := context.WithTimeout(ctx, replica.CallTimeout)
	defer cancel()
	resp, err := w.raw.Txn(actx).
		If(clientv3.Compare(clientv3.CreateRevision(w.lock), "=", 0)).
		Then(clientv3.OpPut(w.lock, w.name, clientv3.WithLease(lease))).
		Commit()
	if err != nil || !resp.Succeeded {
		return 0, false
	}
	token := resp.Header.Revision
	w.conn.Emit(replica.Event{Kind: "acquired", Token: token, Text: fmt.Sprintf("took the lock %s: token %d", w.lock, token),
		Facts: &replica.Facts{Op: "txn", Key: w.lock, Revision: token, Succeeded: true}})
	return token, true
}

// hold is one turn: write with the lab's Write until the turn is over,
// the lease is gone or Write says the lock is not ours, then release.
func (w *writer) hold(ctx context.Context, sess *concurrency.Session, token int64) error {
	lost := ""
	failing := false
	for i := 0; i < turnWrites && lost == "" && ctx.Err() == nil; i++ {
		select {
		case <-sess.Done():
			lost = "its lease ended (the keep-alive stopped)"
			continue
		default:
		}
		if i == rewriteAt {
			w.rewriteLock(ctx, token)
		}
		if err := w.conn.Checkpoint(); err != nil {
			return err
		}
		refused, err := w.write(ctx, token, &failing)
		if err != nil {
			return err
		}
		if refused {
			lost = fmt.Sprintf("Write refused token %d", token)
			continue
		}
		replica.Sleep(ctx, writeEvery)
	}
	if lost != "" {
		w.conn.Emit(replica.Event{Kind: "lost", Token: token, Text: "stopped writing: " + lost})
	} else {
		why := "its turn is over"
		if ctx.Err() != nil {
			why = "it was told to stop"
		}
		// Stepped down before the release is sent, so that this event
		// comes before the next holder's.
		w.conn.Emit(replica.Event{Kind: "stepped-down", Token: token, Text: fmt.Sprintf("stopped writing (token %d): %s; releasing the lock", token, why)})
	}
	w.release(token)
	return nil
}

// write calls the lab's Write once and reports what it returned, with
// the revision of etcd's answer: refused is ErrNotOwner; an error that
// is not is reported once in a row and the turn goes on.
func (w *writer) write(ctx context.Context, token int64, failing *bool) (refused bool, err error) {
	w.writes++
	value := fmt.Sprintf("%s token %d write %d", w.name, token, w.writes)
	wctx, cancel := context.WithTimeout(ctx, replica.CallTimeout)
	defer cancel()
	w.spy.Take()
	rev, err := fencedwrite.Write(wctx, w.cli, w.lock, token, w.data, value)
	sent := w.spy.Take()
	last, changed := replica.Last(sent), changedAt(sent)
	switch {
	case errors.Is(err, labs.ErrNotImplemented):
		return false, err
	case err == nil:
		*failing = false
		w.conn.Emit(replica.Event{Kind: "write-accepted", Token: token, Text: fmt.Sprintf("Write %q with token %d returned revision %d", value, token, rev) + changedText(changed, rev),
			Facts: &replica.Facts{Op: "write", Key: w.data, Revision: rev, Succeeded: true, Changed: changed}})
	case errors.Is(err, fencedwrite.ErrNotOwner):
		w.conn.Emit(replica.Event{Kind: "write-rejected", Token: token, Text: fmt.Sprintf("Write %q with token %d returned ErrNotOwner (etcd answered at revision %d)", value, token, last) + changedText(changed, 0),
			Facts: &replica.Facts{Op: "write", Key: w.data, Revision: last, Err: err.Error(), Changed: changed}})
		return true, nil
	case (ctx.Err() == nil && !*failing) || len(changed) > 0:
		*failing = true
		w.conn.Emit(replica.Event{Kind: "note", Token: token, Text: fmt.Sprintf("Write with token %d could not ask etcd: %v (it tries again)", token, err) + changedText(changed, 0),
			Facts: &replica.Facts{Op: "write", Key: w.data, Revision: last, Err: err.Error(), Changed: changed}})
	}
	return false, nil
}

// changedAt is the revisions at which the answers of etcd to the lab's
// Write say it put or deleted keys: what the checker names this replica
// for when the key watch shows the data changed there (a refused Write
// whose Else branch deleted or overwrote it, say).
func changedAt(sent []replica.Reply) []int64 {
	var out []int64
	for _, r := range sent {
		if r.Put || r.Deleted > 0 {
			out = append(out, r.Revision)
		}
	}
	return out
}

// changedText says where the Write's requests changed etcd, when that
// is not only at the revision it returned (returned).
func changedText(revs []int64, returned int64) string {
	if len(revs) == 0 || (len(revs) == 1 && revs[0] == returned) {
		return ""
	}
	return fmt.Sprintf("; its requests changed etcd at revision(s) %v", revs)
}

// rewriteLock puts the holder's name again at its lock key, on its
// lease, if the lock is still the one it took: its ModRevision moves,
// its CreateRevision does not.
func (w *writer) rewriteLock(ctx context.Context, token int64) {
	rctx, cancel := context.WithTimeout(ctx, replica.CallTimeout)
	defer cancel()
	g, err := w.raw.Get(rctx, w.lock)
	if err != nil || len(g.Kvs) == 0 || g.Kvs[0].CreateRevision != token {
		return
	}
	resp, err := w.raw.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(w.lock), "=", token)).
		Then(clientv3.OpPut(w.lock, w.name, clientv3.WithLease(clientv3.LeaseID(g.Kvs[0].Lease)))).
		Commit()
	if err == nil && resp.Succeeded {
		w.conn.Emit(replica.Event{Kind: "note", Token: token, Text: fmt.Sprintf("rewrote its lock key %s (ModRevision now %d, CreateRevision still %d)", w.lock, resp.Header.Revision, token),
			Facts: &replica.Facts{Op: "txn", Key: w.lock, Revision: resp.Header.Revision, Succeeded: true}})
	}
}

// release deletes the lock if it is still the one created at token.
func (w *writer) release(token int64) {
	ctx, cancel := context.WithTimeout(context.Background(), replica.CallTimeout)
	defer cancel()
	resp, err := w.raw.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(w.lock), "=", token)).
		Then(clientv3.OpDelete(w.lock)).
		Commit()
	f := &replica.Facts{Op: "txn", Key: w.lock}
	text := fmt.Sprintf("released the lock (token %d)", token)
	switch {
	case err != nil:
		f.Err = err.Error()
		text = fmt.Sprintf("could not release the lock (token %d): %v", token, err)
	case !resp.Succeeded:
		f.Revision = resp.Header.Revision
		text = fmt.Sprintf("the lock (token %d) was no longer its own to release", token)
	default:
		f.Revision, f.Succeeded, f.Deleted = resp.Header.Revision, true, 1
	}
	w.conn.Emit(replica.Event{Kind: "note", Token: token, Text: text, Facts: f})
}
