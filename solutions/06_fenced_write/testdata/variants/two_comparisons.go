// Style: cli.Do with clientv3.OpTxn and two comparisons (the lock exists, and was created at the token) instead of a Go-side check of token 0.

// Package fencedwrite is lab 5.2: a write to etcd that only lands while the
// writer still holds its lock, checked by etcd in the same transaction.
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

// Write puts value at key only if the lock at lockKey still exists and was
// created at revision token.
func Write(ctx context.Context, cli *clientv3.Client, lockKey string, token int64, key, value string) (int64, error) {
	cmps := []clientv3.Cmp{
		// An absent key reads as CreateRevision 0: demand that it exists,
		// so that token 0 never matches a missing lock.
		clientv3.Compare(clientv3.CreateRevision(lockKey), ">", 0),
		clientv3.Compare(clientv3.CreateRevision(lockKey), "=", token),
	}
	out, err := cli.Do(ctx, clientv3.OpTxn(cmps, []clientv3.Op{clientv3.OpPut(key, value)}, nil))
	if err != nil {
		return 0, fmt.Errorf("fenced write %s: %w", key, err)
	}
	txn := out.Txn()
	if !txn.Succeeded {
		return 0, ErrNotOwner
	}
	// The put response carries the header of the write itself.
	return txn.Responses[0].GetResponsePut().Header.Revision, nil
}
