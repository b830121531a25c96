// Variant: watches its own key as well as its predecessor and returns ErrTicketLost the moment its own key goes, without waiting for the predecessor.
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

// Enqueue joins the queue under prefix with a key attached to lease.
func Enqueue(ctx context.Context, cli *clientv3.Client, prefix string, lease clientv3.LeaseID) (Ticket, error) {
	key := fmt.Sprintf("%s/%x", prefix, int64(lease))
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(key), "=", 0)).
		Then(clientv3.OpPut(key, "", clientv3.WithLease(lease)), clientv3.OpGet(key)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return Ticket{}, fmt.Errorf("enqueue %s: %w", key, err)
	}
	// Both branches end with a Get of the key: read the place from it.
	last := resp.Responses[len(resp.Responses)-1].GetResponseRange()
	if len(last.Kvs) == 0 {
		return Ticket{}, fmt.Errorf("enqueue %s: key vanished inside the transaction", key)
	}
	return Ticket{Key: key, Rev: last.Kvs[0].CreateRevision}, nil
}

// WaitTurn blocks until t's key is the oldest under prefix.
func WaitTurn(ctx context.Context, cli *clientv3.Client, prefix string, t Ticket) error {
	for {
		resp, err := cli.Get(ctx, prefix+"/", clientv3.WithPrefix(),
			clientv3.WithMaxCreateRev(t.Rev),
			clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortDescend),
			clientv3.WithLimit(2))
		if err != nil {
			return fmt.Errorf("wait turn for %s: %w", t.Key, err)
		}
		if len(resp.Kvs) == 0 || string(resp.Kvs[0].Key) != t.Key {
			return ErrTicketLost
		}
		if len(resp.Kvs) == 1 {
			return nil
		}
		ownGone, err := waitEither(ctx, cli, string(resp.Kvs[1].Key), t.Key, resp.Header.Revision+1)
		if err != nil {
			return fmt.Errorf("wait turn for %s: %w", t.Key, err)
		}
		if ownGone {
			return ErrTicketLost
		}
	}
}

// waitEither watches pred and own from rev until one of them is deleted;
// ownGone says which.
func waitEither(ctx context.Context, cli *clientv3.Client, pred, own string, rev int64) (ownGone bool, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pw := cli.Watch(wctx, pred, clientv3.WithRev(rev), clientv3.WithFilterPut())
	ow := cli.Watch(wctx, own, clientv3.WithRev(rev), clientv3.WithFilterPut())
	for {
		var resp clientv3.WatchResponse
		var ok, mine bool
		select {
		case resp, ok = <-pw:
		case resp, ok = <-ow:
			mine = true
		}
		if !ok {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, errors.New("watch closed while waiting")
		}
		if err := resp.Err(); err != nil {
			return false, err
		}
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return mine, nil
			}
		}
	}
}
