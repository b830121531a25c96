// Style: every request goes through Do: the read is an OpGet, each release an OpTxn, and each claim a transaction nested in an outer one, comparing Version and reading the holder back in its Else branch.

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
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
	if token <= 0 {
		return ErrNotOwner
	}
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(ShardKey(prefix, shard)), "=", token)).
		Then(clientv3.OpPut(OffsetKey(prefix, shard), strconv.FormatInt(offset, 10))).
		Commit()
	if err != nil {
		return fmt.Errorf("commit offset of shard %d: %w", shard, err)
	}
	if !resp.Succeeded {
		return ErrNotOwner
	}
	return nil
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

func (w *Worker) setOwned(m map[int]int64) {
	w.mu.Lock()
	w.owned = m
	w.mu.Unlock()
}

// update changes w.owned in place. Only rebalance calls it, after it has
// set w.owned from its read, so the map is never nil here.
func (w *Worker) update(f func(map[int]int64)) {
	w.mu.Lock()
	f(w.owned)
	w.mu.Unlock()
}

// Run joins the group and keeps a fair share of the shards, reacting to
// every change under Prefix, until ctx is done. Then it gives up its
// shards (by revoking its lease) and returns nil.
func (w *Worker) Run(ctx context.Context) error {
	for {
		// A membership only ends with an error: the session ended, a
		// request failed, or ctx is done. Start a new one after a pause.
		_ = w.member(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// member is one membership: a lease, the member key, and rebalancing on
// every change until the lease is lost or ctx is done.
func (w *Worker) member(ctx context.Context) error {
	lease, err := w.Client.Grant(ctx, int64(w.TTL))
	if err != nil {
		return fmt.Errorf("grant lease: %w", err)
	}
	s, err := concurrency.NewSession(w.Client, concurrency.WithLease(lease.ID), concurrency.WithTTL(w.TTL))
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer closeSession(s)
	// Runs first: a worker whose lease is gone owns nothing, at once.
	defer w.setOwned(nil)

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.Done():
			cancel()
		case <-sctx.Done():
		}
	}()

	if _, err := w.Client.Put(sctx, MemberKey(w.Prefix, w.Name), "", clientv3.WithLease(lease.ID)); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	rev, err := w.rebalance(sctx, lease.ID)
	if err != nil {
		return err
	}
	// Everything after our read arrives on this watch: joins, leaves,
	// shards released or expired.
	wch := w.Client.Watch(sctx, w.Prefix+"/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for {
		select {
		case <-sctx.Done():
			return sctx.Err()
		case resp, ok := <-wch:
			if !ok {
				return errors.New("watch closed")
			}
			if err := resp.Err(); err != nil {
				return fmt.Errorf("watch: %w", err)
			}
		}
		if _, err := w.rebalance(sctx, lease.ID); err != nil {
			return err
		}
	}
}

// rebalance reads members and owners in one Get, then releases shards
// above this worker's target and claims free ones below it. It returns
// the revision of the read.
func (w *Worker) rebalance(ctx context.Context, lease clientv3.LeaseID) (int64, error) {
	out, err := w.Client.Do(ctx, clientv3.OpGet(w.Prefix+"/", clientv3.WithPrefix()))
	if err != nil {
		return 0, fmt.Errorf("read shards: %w", err)
	}
	resp := out.Get()
	var members []string
	taken := map[int]bool{}
	mine := map[int]int64{}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		if name, ok := strings.CutPrefix(key, w.Prefix+"/workers/"); ok {
			members = append(members, name)
		} else if num, ok := strings.CutPrefix(key, w.Prefix+"/shards/"); ok {
			if i, err := strconv.Atoi(num); err == nil {
				taken[i] = true
				if clientv3.LeaseID(kv.Lease) == lease {
					mine[i] = kv.CreateRevision
				}
			}
		}
	}
	// etcd returns a range in key order, so the member names arrive sorted
	// (byte order): a name's index is its rank.
	rank := slices.Index(members, w.Name)
	if rank < 0 {
		return 0, errors.New("our member key is gone")
	}
	target := w.Shards / len(members)
	if rank < w.Shards%len(members) {
		target++
	}
	w.setOwned(maps.Clone(mine))

	// Give back the highest-numbered extras: forget them first, so that we
	// never report a shard that someone else may already hold.
	for len(mine) > target {
		i := -1
		for s := range mine {
			i = max(i, s)
		}
		tok := mine[i]
		delete(mine, i)
		w.update(func(o map[int]int64) { delete(o, i) })
		release := clientv3.OpTxn(
			[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(ShardKey(w.Prefix, i)), "=", tok)},
			[]clientv3.Op{clientv3.OpDelete(ShardKey(w.Prefix, i))}, nil)
		if _, err := w.Client.Do(ctx, release); err != nil {
			return 0, fmt.Errorf("release shard %d: %w", i, err)
		}
	}
	// Claim free shards, lowest first; another worker may beat us to one.
	for i := 0; i < w.Shards && len(mine) < target; i++ {
		if taken[i] {
			continue
		}
		key := ShardKey(w.Prefix, i)
		// A claim in a transaction of its own, nested in an outer one,
		// with the holder read back when it fails.
		claim := clientv3.OpTxn(
			[]clientv3.Cmp{clientv3.Compare(clientv3.Version(key), "=", 0)},
			[]clientv3.Op{clientv3.OpPut(key, w.Name, clientv3.WithLease(lease))},
			[]clientv3.Op{clientv3.OpGet(key)})
		co, err := w.Client.Do(ctx, clientv3.OpTxn(nil, []clientv3.Op{claim}, nil))
		if err != nil {
			return 0, fmt.Errorf("claim shard %d: %w", i, err)
		}
		tr := co.Txn()
		if tr.Responses[0].GetResponseTxn().Succeeded {
			tok := tr.Header.Revision
			mine[i] = tok
			w.update(func(o map[int]int64) { o[i] = tok })
		}
	}
	return resp.Header.Revision, nil
}

// closeSession revokes the lease (dropping the member key and every shard
// key at once), bounded in case etcd is unreachable.
func closeSession(s *concurrency.Session) {
	s.Orphan()
	if s.Client().Ctx().Err() != nil {
		return // the client is closed: there is no one to tell
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	s.Client().Revoke(ctx, s.Lease())
}
