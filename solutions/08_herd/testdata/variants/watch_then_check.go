// Style: reads with Do(OpGet); the watch on the predecessor starts first (from now, confirmed by WithCreatedNotify) and a read after it checks that the predecessor is still there.

// Package herd is lab 7.3: a fair lock queue on etcd in which each waiter
// watches only the key just ahead of its own, so a release wakes one
// waiter instead of all of them.
//
// Edit this file until `go test ./labs/08_herd/` passes. README.md
// explains the task step by step.
package herd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrTicketLost is returned by WaitTurn when the waiter's own key is gone
// (its lease ended) before its turn came.
var ErrTicketLost = errors.New("herd: our queue key is gone")

// Ticket is a place in the queue under a prefix.
type Ticket struct {
	Key string // prefix + "/" + the lease ID in hex
	Rev int64  // the key's CreateRevision: the place in line
}

// Enqueue joins the queue under prefix with a key attached to lease and
// returns the ticket. The oldest key (lowest CreateRevision) holds the
// lock; the owner releases it by deleting its key or revoking its lease.
func Enqueue(ctx context.Context, cli *clientv3.Client, prefix string, lease clientv3.LeaseID) (Ticket, error) {
	key := fmt.Sprintf("%s/%x", prefix, int64(lease))
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, "", clientv3.WithLease(lease))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return Ticket{}, fmt.Errorf("enqueue %s: %w", key, err)
	}
	rev := resp.Header.Revision
	if !resp.Succeeded {
		// Already in line with this lease: keep the place we have.
		rev = resp.Responses[0].GetResponseRange().Kvs[0].CreateRevision
	}
	return Ticket{Key: key, Rev: rev}, nil
}

// WaitTurn blocks until t's key is the oldest under prefix. It watches only
// the key just ahead of t (its predecessor) and, each time that key goes,
// looks again: a waiter in the middle may have died, in which case there
// is a new predecessor to watch rather than a turn to take. It returns
// ErrTicketLost if t's own key disappears, or ctx's error.
func WaitTurn(ctx context.Context, cli *clientv3.Client, prefix string, t Ticket) error {
	for {
		out, err := cli.Do(ctx, clientv3.OpGet(prefix+"/", clientv3.WithPrefix(),
			clientv3.WithMaxCreateRev(t.Rev),
			clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortDescend),
			clientv3.WithLimit(2)))
		if err != nil {
			return fmt.Errorf("wait turn for %s: %w", t.Key, err)
		}
		kvs := out.Get().Kvs
		if len(kvs) == 0 || string(kvs[0].Key) != t.Key {
			return ErrTicketLost
		}
		if len(kvs) == 1 {
			return nil
		}
		if err := watchThenCheck(ctx, cli, string(kvs[1].Key)); err != nil {
			return fmt.Errorf("wait turn for %s: %w", t.Key, err)
		}
	}
}

// watchThenCheck starts a watch on key from now, then reads key: if it
// is gone already (deleted before the watch started) there is nothing to
// wait for; otherwise the watch sees its delete.
func watchThenCheck(ctx context.Context, cli *clientv3.Client, key string) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := cli.Watch(wctx, key, clientv3.WithFilterPut(), clientv3.WithCreatedNotify())
	first, ok := <-wch
	if !ok {
		return watchEnded(ctx)
	}
	if err := first.Err(); err != nil {
		return err
	}
	out, err := cli.Do(ctx, clientv3.OpGet(key, clientv3.WithCountOnly()))
	if err != nil {
		return err
	}
	if out.Get().Count == 0 {
		return nil
	}
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return err
		}
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return nil
			}
		}
	}
	return watchEnded(ctx)
}

func watchEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("watch closed before the predecessor was deleted")
}
