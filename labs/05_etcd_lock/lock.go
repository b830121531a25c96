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

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs"
)

var (
	// ErrLocked is returned by Acquire when someone else holds the lock.
	ErrLocked = errors.New("etcdlock: held by someone else")
	// ErrNotOwner is returned by Release when the key is gone or belongs
	// to a newer owner.
	ErrNotOwner = errors.New("etcdlock: not the owner (lock expired or taken over)")
)

// Acquire tries once to take the lock at key for owner. The key is written
// with owner as its value and attached to lease, so it vanishes when the
// lease ends. On success it returns the fencing token: the key's
// CreateRevision. If the key already exists it returns ErrLocked and
// changes nothing.
func Acquire(ctx context.Context, cli *clientv3.Client, key, owner string, lease clientv3.LeaseID) (token int64, err error) {
	// TODO: in ONE transaction (cli.Txn(ctx)): if the key's CreateRevision
	// is 0 (it does not exist), put owner at key with
	// clientv3.WithLease(lease). Return ErrLocked when the comparison
	// fails. On success the token is the revision the transaction was
	// committed at (resp.Header.Revision), which is the key's
	// CreateRevision.
	return 0, labs.ErrNotImplemented
}

// Release deletes the lock at key only if it is still the one created at
// revision token. Otherwise (expired, or expired and taken by someone
// else) it leaves the key alone and returns ErrNotOwner.
func Release(ctx context.Context, cli *clientv3.Client, key string, token int64) error {
	// TODO: in one transaction, delete key only if its CreateRevision still
	// equals token; return ErrNotOwner when the comparison fails. A plain
	// cli.Delete would remove the lock of whoever holds it now.
	return labs.ErrNotImplemented
}
