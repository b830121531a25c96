// Variant: raw Grant and KeepAlive instead of the concurrency package, a goroutine that clears the shards when the keep-alive channel closes, a growing backoff between memberships, and claims compared on Version.
package shards

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNotOwner is returned by CommitOffset when the token is not the one of
// the shard's current owner key.
var ErrNotOwner = errors.New("shards: not the shard's owner; offset refused")

// ShardKey is the owner key of a shard.
func ShardKey(prefix string, shard int) string { return fmt.Sprintf("%s/shards/%03d", prefix, shard) }

// OffsetKey is where a shard's committed offset is stored.
func OffsetKey(prefix string, shard int) string { return fmt.Sprintf("%s/offsets/%03d", prefix, shard) }

// MemberKey is a live worker's membership key, attached to its lease.
func MemberKey(prefix, name string) string { return prefix + "/workers/" + name }

// CommitOffset stores offset for shard if the shard's owner key exists
// and was created at token.
func CommitOffset(ctx context.Context, cli *clientv3.Client, prefix string, shard int, token, offset int64) error {
	if token < 1 {
		return ErrNotOwner
	}
	key := ShardKey(prefix, shard)
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(key), ">", 0),
			clientv3.Compare(clientv3.CreateRevision(key), "=", token)).
		Then(clientv3.OpPut(OffsetKey(prefix, shard), fmt.Sprint(offset))).
		Commit()
	switch {
	case err != nil:
		return fmt.Errorf("commit offset %d of shard %d: %w", offset, shard, err)
	case !resp.Succeeded:
		return ErrNotOwner
	}
	return nil
}

// Worker takes its fair share of Shards shards under Prefix.
type Worker struct {
	Client *clientv3.Client
	Prefix string
	Name   string
	Shards int
	TTL    int

	mu    sync.Mutex
	owned map[int]int64
}

// Owned returns the shards this worker owns right now, with their tokens.
func (w *Worker) Owned() map[int]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.owned == nil {
		return map[int]int64{}
	}
	return maps.Clone(w.owned)
}

func (w *Worker) edit(f func(m map[int]int64)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.owned == nil {
		w.owned = map[int]int64{}
	}
	f(w.owned)
}

func (w *Worker) clear() { w.edit(func(m map[int]int64) { clear(m) }) }

// Run keeps a fair share until ctx is done, then revokes its lease.
func (w *Worker) Run(ctx context.Context) error {
	pause := 20 * time.Millisecond
	for {
		err := w.membership(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			pause = 20 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

func (w *Worker) membership(ctx context.Context) error {
	g, err := w.Client.Grant(ctx, int64(w.TTL))
	if err != nil {
		return fmt.Errorf("grant: %w", err)
	}
	lease := g.ID
	mctx, end := context.WithCancel(ctx)
	defer func() {
		end()
		w.clear()
		rctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		w.Client.Revoke(rctx, lease)
	}()
	ka, err := w.Client.KeepAlive(mctx, lease)
	if err != nil {
		return fmt.Errorf("keep alive: %w", err)
	}
	go func() {
		for range ka {
		}
		// The lease is no longer renewed: nothing is ours from now on.
		w.clear()
		end()
	}()
	if _, err := w.Client.Put(mctx, MemberKey(w.Prefix, w.Name), "", clientv3.WithLease(lease)); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	rev, err := w.balance(mctx, lease)
	if err != nil {
		return err
	}
	for wr := range w.Client.Watch(mctx, w.Prefix+"/", clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		if err := wr.Err(); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
		if _, err := w.balance(mctx, lease); err != nil {
			return err
		}
	}
	return errors.New("watch ended")
}

// balance reads the group and moves this worker towards its target.
func (w *Worker) balance(ctx context.Context, lease clientv3.LeaseID) (int64, error) {
	resp, err := w.Client.Get(ctx, w.Prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("read group: %w", err)
	}
	names := []string{}
	owner := map[int]int64{} // shard -> lease
	tokens := map[int]int64{}
	for _, kv := range resp.Kvs {
		k := strings.TrimPrefix(string(kv.Key), w.Prefix+"/")
		if name, ok := strings.CutPrefix(k, "workers/"); ok {
			names = append(names, name)
		} else if num, ok := strings.CutPrefix(k, "shards/"); ok {
			if i, err := strconv.Atoi(num); err == nil {
				owner[i], tokens[i] = kv.Lease, kv.CreateRevision
			}
		}
	}
	sort.Strings(names)
	rank := sort.SearchStrings(names, w.Name)
	if rank == len(names) || names[rank] != w.Name {
		return 0, errors.New("not a member any more")
	}
	target := w.Shards / len(names)
	if rank < w.Shards%len(names) {
		target++
	}
	var mine []int
	for i := 0; i < w.Shards; i++ {
		if owner[i] == int64(lease) {
			mine = append(mine, i)
		}
	}
	w.mu.Lock()
	w.owned = map[int]int64{}
	for _, i := range mine {
		w.owned[i] = tokens[i]
	}
	w.mu.Unlock()
	for len(mine) > target {
		i := mine[len(mine)-1]
		mine = mine[:len(mine)-1]
		w.edit(func(m map[int]int64) { delete(m, i) })
		key := ShardKey(w.Prefix, i)
		if _, err := w.Client.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", tokens[i])).
			Then(clientv3.OpDelete(key)).Commit(); err != nil {
			return 0, fmt.Errorf("give back shard %d: %w", i, err)
		}
	}
	for i := 0; i < w.Shards && len(mine) < target; i++ {
		if _, taken := owner[i]; taken {
			continue
		}
		key := ShardKey(w.Prefix, i)
		r, err := w.Client.Txn(ctx).
			If(clientv3.Compare(clientv3.Version(key), "=", 0)).
			Then(clientv3.OpPut(key, w.Name, clientv3.WithLease(lease))).Commit()
		if err != nil {
			return 0, fmt.Errorf("claim shard %d: %w", i, err)
		}
		if !r.Succeeded {
			continue
		}
		mine = append(mine, i)
		tok := r.Header.Revision
		w.edit(func(m map[int]int64) { m[i] = tok })
	}
	return resp.Header.Revision, nil
}
