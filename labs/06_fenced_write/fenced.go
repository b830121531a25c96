// Package fencedwrite is lab 5.2: a write to etcd that only lands while the
// writer still holds its lock, checked by etcd in the same transaction.
//
// Edit this file until `go test ./labs/06_fenced_write/` passes. README.md
// explains the task step by step.
package fencedwrite

import (
	"context"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs"
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
	// TODO: one transaction: if the CreateRevision of lockKey equals token,
	// put value at key. If the comparison fails, return ErrNotOwner. If the
	// request itself fails, return that error wrapped (fmt.Errorf with %w),
	// not ErrNotOwner: "etcd said no" and "could not ask" are different.
	// On success return resp.Header.Revision.
	return 0, labs.ErrNotImplemented
}
