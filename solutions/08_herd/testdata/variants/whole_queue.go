// Variant: reads the whole line up to its own place in ascending order and finds its predecessor by position; the watch is started before a confirming read instead of with WithRev.
package herd

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	key := prefix + "/" + fmt.Sprintf("%x", int64(lease))
	put := clientv3.OpPut(key, "", clientv3.WithLease(lease))
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(put).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return Ticket{}, fmt.Errorf("enqueue %s: %w", key, err)
	}
	if resp.Succeeded {
		return Ticket{Key: key, Rev: resp.Header.Revision}, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return Ticket{}, fmt.Errorf("enqueue %s: the key exists but could not be read", key)
	}
	return Ticket{Key: key, Rev: kvs[0].CreateRevision}, nil
}

// WaitTurn blocks until t's key is the oldest under prefix.
func WaitTurn(ctx context.Context, cli *clientv3.Client, prefix string, t Ticket) error {
	for {
		line, err := cli.Get(ctx, prefix+"/", clientv3.WithPrefix(),
			clientv3.WithMaxCreateRev(t.Rev),
			clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend),
			clientv3.WithKeysOnly())
		if err != nil {
			return fmt.Errorf("read the line for %s: %w", t.Key, err)
		}
		me := slices.IndexFunc(line.Kvs, func(kv *mvccpb.KeyValue) bool { return string(kv.Key) == t.Key })
		switch me {
		case -1:
			return ErrTicketLost
		case 0:
			return nil
		}
		gone, err := watchGone(ctx, cli, string(line.Kvs[me-1].Key))
		if err != nil {
			return fmt.Errorf("wait for the key ahead of %s: %w", t.Key, err)
		}
		_ = gone
	}
}

// watchGone returns once key no longer exists. It starts the watch first
// and then checks that the key is still there, so a delete between our
// read of the line and the watch is not lost.
func watchGone(ctx context.Context, cli *clientv3.Client, key string) (bool, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := cli.Watch(wctx, key)
	still, err := cli.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		return false, err
	}
	if still.Count == 0 {
		return true, nil
	}
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return false, err
		}
		for _, ev := range resp.Events {
			if ev.Type == mvccpb.DELETE {
				return true, nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return false, errors.New("watch closed")
}
