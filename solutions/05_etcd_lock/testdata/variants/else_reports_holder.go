// Style: an Else branch that reads the current holder, errors that wrap the sentinels with who holds the lock, and argument checks up front.

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
	if key == "" {
		return 0, errors.New("etcdlock: acquire: empty key")
	}
	if lease == clientv3.NoLease {
		return 0, fmt.Errorf("etcdlock: acquire %s: a lock without a lease never expires", key)
	}
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, owner, clientv3.WithLease(lease))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("etcdlock: acquire %s: %w", key, err)
	}
	if !resp.Succeeded {
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			return 0, fmt.Errorf("%w: %s has it (token %d)", ErrLocked, kvs[0].Value, kvs[0].CreateRevision)
		}
		return 0, ErrLocked
	}
	token := resp.Header.Revision
	if token <= 0 {
		return 0, fmt.Errorf("etcdlock: acquire %s: etcd answered with revision %d", key, token)
	}
	return token, nil
}

// Release deletes the lock at key only if it is still the one created at
// revision token, else returns ErrNotOwner.
func Release(ctx context.Context, cli *clientv3.Client, key string, token int64) error {
	if token <= 0 {
		return fmt.Errorf("%w: token %d was never a lock", ErrNotOwner, token)
	}
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", token)).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdlock: release %s: %w", key, err)
	}
	if resp.Succeeded {
		return nil
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		return fmt.Errorf("%w: now held by %s (token %d, yours was %d)", ErrNotOwner, kvs[0].Value, kvs[0].CreateRevision, token)
	}
	return fmt.Errorf("%w: the lock is gone", ErrNotOwner)
}
