// Style: one Do each, with a transaction nested in another: Acquire's inner transaction takes the lock or reads the holder; Release's outer comparison checks the key exists, the inner one the token.

// Package etcdlock is lab 7.1: a lock on a real etcd, taken in one
// transaction and released only by its owner, with the key's
// CreateRevision as the fencing token.
//
// Edit this file until `go test ./labs/05_etcd_lock/` passes. README.md
// explains the task step by step.
package etcdlock

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

var (
	// ErrLocked is returned by Acquire when someone else holds the lock.
	ErrLocked = errors.New("etcdlock: held by someone else")
	// ErrNotOwner is returned by Release when the key is gone or belongs
	// to a newer owner.
	ErrNotOwner = errors.New("etcdlock: not the owner (lock expired or taken over)")
)

// Acquire tries once to take the lock at key for owner, attached to lease,
// and returns the key's CreateRevision as the fencing token.
func Acquire(ctx context.Context, cli *clientv3.Client, key, owner string, lease clientv3.LeaseID) (token int64, err error) {
	take := clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(key), "=", 0)},
		[]clientv3.Op{clientv3.OpPut(key, owner, clientv3.WithLease(lease))},
		[]clientv3.Op{clientv3.OpGet(key)})
	out, err := cli.Do(ctx, clientv3.OpTxn(nil, []clientv3.Op{take}, nil))
	if err != nil {
		return 0, fmt.Errorf("acquire %s: %w", key, err)
	}
	inner := out.Txn().Responses[0].GetResponseTxn()
	if !inner.Succeeded {
		holder := "someone"
		if kvs := inner.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			holder = string(kvs[0].Value)
		}
		return 0, fmt.Errorf("%w (%s)", ErrLocked, holder)
	}
	return out.Txn().Header.Revision, nil
}

// Release deletes the lock at key only if it is still the one created at
// revision token, else returns ErrNotOwner.
func Release(ctx context.Context, cli *clientv3.Client, key string, token int64) error {
	mine := clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(key), "=", token)},
		[]clientv3.Op{clientv3.OpDelete(key)}, nil)
	out, err := cli.Do(ctx, clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.Version(key), ">", 0)},
		[]clientv3.Op{mine}, nil))
	if err != nil {
		return fmt.Errorf("release %s: %w", key, err)
	}
	txn := out.Txn()
	// An absent key fails the outer comparison, so token 0 never matches
	// the "CreateRevision 0" of a missing key.
	if !txn.Succeeded || !txn.Responses[0].GetResponseTxn().Succeeded {
		return ErrNotOwner
	}
	return nil
}
