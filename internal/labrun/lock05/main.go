// Command lock05 is one replica of lab 05 under a lab run: it takes turns
// with the other replicas at the lab's lock, with the learner's
// etcdlock.Acquire and Release (labs/05_etcd_lock, or the reference
// through a build overlay). A holder writes to the playground's fenced
// resource with its token ten times, a tenth of a second apart, then
// releases; a waiter waits for the lock's key to go and tries again. It
// is built and started by internal/labrun, never by hand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	etcdlock "github.com/ownership-election/playground/labs/05_etcd_lock"

	"github.com/ownership-election/playground/internal/labrun/replica"
	"github.com/ownership-election/playground/labs"
)

const (
	turnWrites = 10                     // writes in one turn with the lock
	rewriteAt  = 3                      // the lock key is rewritten after this many
	writeEvery = 100 * time.Millisecond // between two writes
	rest       = 300 * time.Millisecond // after a turn, before trying again
	waitBound  = 2 * time.Second        // a waiter looks again at least this often

	// opLocked is the Facts.Op of the note that Acquire returned
	// ErrLocked (internal/labrun's lab05OpLocked).
	opLocked = "locked"
)

func main() { os.Exit(run()) }

func run() int {
	p, code := replica.Start()
	if p == nil {
		return code
	}
	defer p.Close()
	cli, conn := p.Client, p.Conn
	h := &holder{conn: conn, name: p.Config.Name, key: p.Config.Prefix, cli: cli, raw: cli.KV, leases: replica.NewLeases(cli, conn, p.Config.TTL)}
	h.spy = replica.NewSpy(cli.KV)
	cli.KV = h.spy
	conn.Emit(replica.Event{Kind: "running", Text: "the lab's Acquire and Release started taking turns at the lock " + h.key})
	err := h.loop(p.Ctx)
	h.leases.Close()
	return p.Finish(err, replica.Ending{Call: "the lock loop", Stopped: "The lock loop returned after its context ended: lock released, lease revoked"})
}

// holder is one replica's side of the turns.
type holder struct {
	conn   *replica.Conn
	name   string
	key    string
	cli    *clientv3.Client // its KV is spy, for the lab's code
	raw    clientv3.KV      // the replica's own reads
	spy    *replica.Spy
	leases *replica.Leases
	writes int
}

// loop takes turns until ctx ends.
func (h *holder) loop(ctx context.Context) error {
	for ctx.Err() == nil {
		sess, err := h.leases.Current(ctx)
		if err != nil {
			replica.Sleep(ctx, 200*time.Millisecond)
			continue
		}
		token, err := h.acquire(ctx, sess.Lease())
		switch {
		case errors.Is(err, labs.ErrNotImplemented):
			return fmt.Errorf("Acquire returned %w", err)
		case errors.Is(err, etcdlock.ErrLocked):
			replica.WaitFree(ctx, h.cli, h.raw, h.key, waitBound)
		case err != nil:
			replica.Sleep(ctx, 200*time.Millisecond)
		default:
			if err := h.hold(ctx, sess.Done(), sess.Lease(), token); err != nil {
				return err
			}
			replica.Sleep(ctx, rest)
		}
	}
	return nil
}

// acquire calls the lab's Acquire once and reports what it returned,
// with the revision at which its requests wrote, if they did.
func (h *holder) acquire(ctx context.Context, lease clientv3.LeaseID) (int64, error) {
	actx, cancel := context.WithTimeout(ctx, replica.CallTimeout)
	defer cancel()
	h.spy.Take()
	token, err := etcdlock.Acquire(actx, h.cli, h.key, h.name, lease)
	sent := h.spy.Take()
	rev := replica.Wrote(sent)
	switch {
	case err == nil:
		h.conn.Emit(replica.Event{Kind: "acquired", Token: token,
			Text:  fmt.Sprintf("Acquire took the lock %s: token %d", h.key, token),
			Facts: &replica.Facts{Op: "acquire", Key: h.key, Revision: rev, Succeeded: true}})
	case errors.Is(err, etcdlock.ErrLocked):
		// With the revision of etcd's last answer (0: none came), so
		// that the playground can tell "someone holds it" from a
		// failure dressed up as one (lab05LockedMeansHeld).
		last := replica.Last(sent)
		h.conn.Emit(replica.Event{Kind: "note", Text: fmt.Sprintf("Acquire returned ErrLocked (etcd's last answer at revision %d)", last),
			Facts: &replica.Facts{Op: opLocked, Key: h.key, Revision: last, Err: err.Error()}})
	case ctx.Err() != nil, errors.Is(err, labs.ErrNotImplemented):
	default:
		h.conn.Emit(replica.Event{Kind: "note", Text: fmt.Sprintf("Acquire failed: %v; the lease it was asked under is dropped (revoked), since Acquire may have written the lock before its answer was lost", err),
			Facts: &replica.Facts{Op: "acquire", Key: h.key, Revision: rev, Err: err.Error()}})
		h.leases.Drop()
	}
	return token, err
}

// hold is one turn with the lock: write with token until the turn is
// over, the lease is gone or the resource refuses the token, then
// release.
func (h *holder) hold(ctx context.Context, leaseGone <-chan struct{}, lease clientv3.LeaseID, token int64) error {
	lost := ""
	for i := 0; i < turnWrites && lost == "" && ctx.Err() == nil; i++ {
		select {
		case <-leaseGone:
			lost = "its lease ended (the keep-alive stopped)"
			continue
		default:
		}
		if i == rewriteAt {
			h.rewriteLock(ctx, lease, token)
		}
		h.writes++
		a, err := h.conn.Write(token, fmt.Sprintf("%s#%d", h.name, h.writes))
		if err != nil {
			return err
		}
		if !a.OK {
			lost = fmt.Sprintf("the resource refused token %d (it had accepted %d)", token, a.Highest)
			continue
		}
		select {
		case <-ctx.Done():
		case <-leaseGone:
		case <-time.After(writeEvery):
		}
	}
	if lost != "" {
		h.conn.Emit(replica.Event{Kind: "lost", Token: token, Text: "stopped holding the lock: " + lost})
	} else {
		stepDown(h.conn, ctx, token)
	}
	return h.release(token)
}

// rewriteLock puts the holder's name again at its lock key, on its
// lease, if the lock is still the one it took (as a holder that keeps
// some state in its lock's value does): its ModRevision moves, its
// CreateRevision, the token, does not. A Release that compares the
// token with ModRevision then fails to free the holder's own lock.
func (h *holder) rewriteLock(ctx context.Context, lease clientv3.LeaseID, token int64) {
	rctx, cancel := context.WithTimeout(ctx, replica.CallTimeout)
	defer cancel()
	resp, err := h.raw.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(h.key), "=", token)).
		Then(clientv3.OpPut(h.key, h.name, clientv3.WithLease(lease))).
		Commit()
	if err == nil && resp.Succeeded {
		h.conn.Emit(replica.Event{Kind: "note", Token: token, Text: fmt.Sprintf("rewrote its lock key %s (ModRevision now %d, CreateRevision still %d)", h.key, resp.Header.Revision, token),
			Facts: &replica.Facts{Op: "txn", Key: h.key, Revision: resp.Header.Revision, Succeeded: true}})
	}
}

// stepDown ends a turn that was not lost before the release is sent: the
// replica stops acting as the holder first, so that its event comes
// before the next holder's.
func stepDown(conn *replica.Conn, ctx context.Context, token int64) {
	why := "its turn is over"
	if ctx.Err() != nil {
		why = "it was told to stop"
	}
	conn.Emit(replica.Event{Kind: "stepped-down", Token: token, Text: fmt.Sprintf("stopped holding the lock (token %d): %s; releasing it", token, why)})
}

// release calls the lab's Release and reports what it returned, with
// the revision at which its requests deleted keys, if they did.
func (h *holder) release(token int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), replica.CallTimeout)
	defer cancel()
	h.spy.Take()
	err := etcdlock.Release(ctx, h.cli, h.key, token)
	if errors.Is(err, labs.ErrNotImplemented) {
		return fmt.Errorf("Release returned %w", err)
	}
	rev, n := replica.DeletedAt(h.spy.Take())
	f := &replica.Facts{Op: "release", Key: h.key, Revision: rev, Deleted: n, Succeeded: err == nil}
	text := fmt.Sprintf("Release with token %d returned nil", token)
	if err != nil {
		f.Err = err.Error()
		text = fmt.Sprintf("Release with token %d returned %q", token, err)
	}
	if rev > 0 {
		text += fmt.Sprintf(" (its requests deleted %d key(s) at revision %d)", n, rev)
	}
	h.conn.Emit(replica.Event{Kind: "note", Token: token, Text: text, Facts: f})
	if err != nil && !errors.Is(err, etcdlock.ErrNotOwner) {
		// No answer: the lock may still be there, on this replica's
		// lease. Dropping the lease frees it now rather than at its end.
		h.leases.Drop()
	}
	return nil
}
