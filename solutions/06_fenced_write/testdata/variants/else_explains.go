// Style: argument checks first, an Else branch that reads the lock so the refusal says who holds it now, and the sentinel wrapped with %w.

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
func Write(ctx context.Context, cli *clientv3.Client, lockKey string, token int64, key, value string) (rev int64, err error) {
	switch {
	case lockKey == "" || key == "":
		return 0, errors.New("fencedwrite: empty lock key or data key")
	case lockKey == key:
		return 0, fmt.Errorf("fencedwrite: %s is the lock itself", key)
	case token <= 0:
		return 0, fmt.Errorf("%w: token %d was never a lock", ErrNotOwner, token)
	}
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(lockKey), "=", token)).
		Then(clientv3.OpPut(key, value)).
		Else(clientv3.OpGet(lockKey)).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("fencedwrite: write %s under %s: %w", key, lockKey, err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		return 0, fmt.Errorf("%w: %s is now held by %s with token %d (yours: %d)", ErrNotOwner, lockKey, kvs[0].Value, kvs[0].CreateRevision, token)
	}
	return 0, fmt.Errorf("%w: %s is gone", ErrNotOwner, lockKey)
}
