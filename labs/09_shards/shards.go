// Package shards is lab 9.1: workers that share M shards through one lease
// key per shard, keep ownership balanced, take over a dead worker's shards,
// and commit stream offsets fenced by the shard's token.
//
// Edit this file until `go test ./labs/09_shards/` passes. README.md
// explains the task step by step.
package shards

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs"
)

// ErrNotOwner is returned by CommitOffset when the token is not the one of
// the shard's current owner key.
var ErrNotOwner = errors.New("shards: not the shard's owner; offset refused")

// ShardKey is the owner key of a shard: its value is the owner's name, it
// is attached to the owner's lease, its CreateRevision is the token.
func ShardKey(prefix string, shard int) string { return fmt.Sprintf("%s/shards/%03d", prefix, shard) }

// OffsetKey is where a shard's committed offset is stored.
func OffsetKey(prefix string, shard int) string { return fmt.Sprintf("%s/offsets/%03d", prefix, shard) }

// MemberKey is a live worker's membership key, attached to its lease.
func MemberKey(prefix, name string) string { return prefix + "/workers/" + name }

// CommitOffset stores offset for shard, but only if the shard's owner key
// still exists and was created at token, in one transaction. It returns
// ErrNotOwner when that check fails, and for a token <= 0 (a missing key's
// CreateRevision is 0 too, and 0 is what Owned()[shard] gives for a shard
// the worker does not own).
func CommitOffset(ctx context.Context, cli *clientv3.Client, prefix string, shard int, token, offset int64) error {
	// TODO: refuse token <= 0 with ErrNotOwner. Then one transaction: if
	// CreateRevision(ShardKey(prefix, shard)) == token, put
	// strconv.FormatInt(offset, 10) at OffsetKey(prefix, shard). Return
	// ErrNotOwner when the comparison fails (this is lab 5.2 again).
	return labs.ErrNotImplemented
}

// Worker takes its fair share of Shards shards under Prefix: with N live
// workers sorted by name, the worker at rank r owns Shards/N shards, plus
// one more if r < Shards%N.
type Worker struct {
	Client *clientv3.Client
	Prefix string
	Name   string
	Shards int // M: shards are numbered 0 .. M-1
	TTL    int // lease TTL in seconds

	mu    sync.Mutex
	owned map[int]int64 // shard -> token
}

// Owned returns the shards this worker owns right now, with their tokens.
// It is empty once the worker's lease is lost.
func (w *Worker) Owned() map[int]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[int]int64, len(w.owned))
	maps.Copy(out, w.owned)
	return out
}

// Run joins the group and keeps a fair share of the shards, reacting to
// every change under Prefix, until ctx is done. Then it gives up its
// shards (by revoking its lease) and returns nil.
func (w *Worker) Run(ctx context.Context) error {
	// TODO: loop until ctx is done; each round is one membership:
	//   1. a lease of w.TTL seconds kept alive (concurrency.NewSession);
	//      put MemberKey(w.Prefix, w.Name) attached to it;
	//   2. rebalance: read everything under w.Prefix+"/" in ONE read (a
	//      Get of the prefix, or a read-only transaction); the
	//      member keys give N and your rank (sort the names), the shard
	//      keys give the owners (yours are those with your lease). Set
	//      w.owned from that read. Target = Shards/N, +1 if rank <
	//      Shards%N. Above target: forget, then delete (guarded by the
	//      token) your highest shards. Below: claim free shards, lowest
	//      first, with a create-if-absent transaction and your lease;
	//   3. watch w.Prefix+"/" from the read's revision + 1 and rebalance
	//      after every change;
	//   4. when the session ends (s.Done()), clear w.owned AT ONCE, then
	//      start a new membership; when ctx ends, clear w.owned, revoke the
	//      lease once (that releases every shard) with a context of its own
	//      and a timeout of half a second or so, and return nil;
	//   5. after an error, end the membership the same way and start a new
	//      one after a pause (100 ms, or a growing backoff), never at once.
	// Your shards are the keys on YOUR lease, not the keys with your name.
	// Guard w.owned with w.mu: the tests call Owned from other goroutines.
	return labs.ErrNotImplemented
}
