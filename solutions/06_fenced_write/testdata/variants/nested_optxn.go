// Style: one Do with a transaction nested in another: the outer one checks that the lock key exists (so token 0 never matches an absent key), the inner one compares the token, writes, or reads the holder for the refusal.

// Package fencedwrite is lab 5.2: a write to etcd that only lands while the
// writer still holds its lock, checked by etcd in the same transaction.
//
// Edit this file until `go test ./labs/06_fenced_write/` passes. README.md
// explains the task step by step.
package fencedwrite

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNotOwner is returned by Write when the lock at lockKey is gone or is
// no longer the one created at the caller's token.
var ErrNotOwner = errors.New("fencedwrite: not the lock owner any more; write refused")

// Write puts value at key, but only if the lock at lockKey still exists and
// was created at revision token (the caller's fencing token). Check and
// write happen in one transaction, so no other owner can come between
// them. It returns the revision of the write, ErrNotOwner when the check
// fails, or another error (wrapped) when etcd could not be asked.
func Write(ctx context.Context, cli *clientv3.Client, lockKey string, token int64, key, value string) (rev int64, err error) {
	fenced := clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(lockKey), "=", token)},
		[]clientv3.Op{clientv3.OpPut(key, value)},
		[]clientv3.Op{clientv3.OpGet(lockKey)})
	out, err := cli.Do(ctx, clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.Version(lockKey), ">", 0)},
		[]clientv3.Op{fenced}, nil))
	if err != nil {
		return 0, fmt.Errorf("fenced write of %s: %w", key, err)
	}
	txn := out.Txn()
	if !txn.Succeeded {
		return 0, fmt.Errorf("%w: %s is gone", ErrNotOwner, lockKey)
	}
	inner := txn.Responses[0].GetResponseTxn()
	if !inner.Succeeded {
		holder := inner.Responses[0].GetResponseRange().Kvs[0]
		return 0, fmt.Errorf("%w: %s is now %s's (token %d)", ErrNotOwner, lockKey, holder.Value, holder.CreateRevision)
	}
	return txn.Header.Revision, nil
}
