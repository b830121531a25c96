// Style: cli.Do with clientv3.OpTxn, a Version comparison for "free", and the release checked by the number of keys it deleted.

// Package etcdlock is lab 7.1: a lock on a real etcd, taken in one
// transaction and released only by its owner, with the key's
// CreateRevision as the fencing token.
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
func Acquire(ctx context.Context, cli *clientv3.Client, key, owner string, lease clientv3.LeaseID) (int64, error) {
	// Version 0 means the key does not exist, like CreateRevision 0.
	free := clientv3.Compare(clientv3.Version(key), "=", 0)
	take := clientv3.OpPut(key, owner, clientv3.WithLease(lease))
	out, err := cli.Do(ctx, clientv3.OpTxn([]clientv3.Cmp{free}, []clientv3.Op{take}, nil))
	if err != nil {
		return 0, fmt.Errorf("take lock %s: %w", key, err)
	}
	txn := out.Txn()
	if !txn.Succeeded {
		return 0, ErrLocked
	}
	return txn.Header.Revision, nil
}

// Release deletes the lock at key only if it is still the one created at
// revision token, else returns ErrNotOwner.
func Release(ctx context.Context, cli *clientv3.Client, key string, token int64) error {
	mine := clientv3.Compare(clientv3.CreateRevision(key), "=", token)
	out, err := cli.Do(ctx, clientv3.OpTxn([]clientv3.Cmp{mine}, []clientv3.Op{clientv3.OpDelete(key)}, nil))
	if err != nil {
		return fmt.Errorf("release lock %s: %w", key, err)
	}
	txn := out.Txn()
	// With token 0 an absent key passes the comparison; the delete then
	// removes nothing, which is not a release.
	if !txn.Succeeded || txn.Responses[0].GetResponseDeleteRange().Deleted != 1 {
		return ErrNotOwner
	}
	return nil
}
