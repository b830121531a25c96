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

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs"
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
	// TODO: the key is fmt.Sprintf("%s/%x", prefix, int64(lease)). Create
	// it in one transaction (CreateRevision == 0), attached to the lease.
	// The ticket's Rev is the key's CreateRevision. If the key already
	// exists (same lease enqueued twice), keep its existing place: add an
	// Else(clientv3.OpGet(key)) and read the CreateRevision from it.
	return Ticket{}, labs.ErrNotImplemented
}

// WaitTurn blocks until t's key is the oldest under prefix. It watches only
// the key just ahead of t (its predecessor) and, each time that key goes,
// looks again: a waiter in the middle may have died, in which case there
// is a new predecessor to watch rather than a turn to take. It returns
// ErrTicketLost if t's own key disappears, or ctx's error.
func WaitTurn(ctx context.Context, cli *clientv3.Client, prefix string, t Ticket) error {
	// TODO: loop:
	//   1. read the keys under prefix+"/" created at or before t.Rev,
	//      newest first, at most 2 (clientv3.WithPrefix,
	//      WithMaxCreateRev, WithSort(SortByCreateRevision, SortDescend),
	//      WithLimit(2));
	//   2. if the first is not t.Key, return ErrTicketLost; if it is the
	//      only one, it is your turn: return nil;
	//   3. otherwise watch ONLY the second (your predecessor) from
	//      resp.Header.Revision+1 (so a delete between the read and the
	//      watch is not missed) until a DELETE event, then go to 1.
	// Never watch the whole prefix or the owner's key: every waiter would
	// wake on every release. Watch on a context you cancel when you stop
	// waiting, pass ctx to every call, and if the watch channel closes
	// without a DELETE, return an error (ctx.Err() if ctx is done): a closed
	// channel is not your turn.
	return labs.ErrNotImplemented
}
