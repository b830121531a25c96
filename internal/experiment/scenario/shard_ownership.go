package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// shardOwnershipScenario is the scenario shard-ownership.
var shardOwnershipScenario = &experiment.Scenario{
	Name:            "shard-ownership",
	Title:           "Shard ownership: kill a worker",
	Summary:         "Workers split the shards by rank-based targets, as in lab 9.1: each owns one key per shard, all on its own lease. Then one worker crashes.",
	Faults:          "crash a worker",
	DefaultReplicas: 4, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runShards,
	Predict:    shardQuestion,
	Shows:      []history.Property{{Name: "only-dead-shards-move", Check: onlyDeadShardsMove}},
}

const shardsPerWorker = 3

func runShards(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	v := history.Verdict{}
	n := run.Params.Replicas
	shards := n * shardsPerWorker
	ws := make([]*experiment.Replica, n)
	for i := range ws {
		r, err := run.NewReplica(fmt.Sprintf("w%d", i+1))
		if err != nil {
			return v, err
		}
		ws[i] = r
	}
	if err := run.Phase(ctx, fmt.Sprintf("%d workers share %d shards; each hangs its shard keys on its one lease", n, shards)); err != nil {
		return v, err
	}
	for _, w := range ws {
		if err := w.Start(shardWorker(shards)); err != nil {
			return v, err
		}
	}
	var before map[string]string
	if !experiment.WaitFor(ctx, 10*time.Second, func() bool {
		before = shardOwners(ctx, run)
		return len(before) == shards && spread(before, ws) == 0
	}) {
		return v, fmt.Errorf("the shards were never spread evenly: %s", describe(shardOwners(ctx, run), ws))
	}
	run.Note("balanced: %s", describe(before, ws))

	victim := ws[0]
	if err := run.Phase(ctx, fmt.Sprintf("crash %s: its lease is orphaned, not revoked; its shard keys live until it expires", victim.Name)); err != nil {
		return v, err
	}
	if err := run.AwaitAny(ctx, ws[1:], "take the crashed worker's shards"); err != nil {
		return v, err
	}
	victim.Crash(history.ByScript)
	crashed := time.Now()
	var after map[string]string
	moved := experiment.WaitFor(ctx, run.TTLDuration()+5*time.Second, func() bool {
		after = shardOwners(ctx, run)
		if len(after) < shards {
			return false
		}
		for _, o := range after {
			if o == victim.Name {
				return false
			}
		}
		return spread(after, ws[1:]) <= 1
	})
	took := time.Since(crashed)
	if !moved {
		return v, fmt.Errorf("the dead worker's shards never all moved: %s", describe(shardOwners(ctx, run), ws[1:]))
	}
	// Give stragglers a moment: a late claim would change the spread.
	if err := experiment.Sleep(ctx, 300*time.Millisecond); err != nil {
		return v, err
	}
	after = shardOwners(ctx, run)
	var movedN, wrong int
	for s, o := range before {
		if after[s] != o {
			if o == victim.Name {
				movedN++
			} else {
				wrong++
			}
		}
	}
	imb := spread(after, ws[1:])
	run.Note("after: %s", describe(after, ws[1:]))
	run.Figure("move_s", took.Seconds(), "s", fmt.Sprintf("%d shards moved %.2fs after the crash (%s)", movedN, took.Seconds(), history.TTLLabel(run.TTL())))
	run.Figure("moved", float64(movedN), "shards", fmt.Sprintf("%d of %s's shards moved", movedN, victim.Name))
	run.Figure("moved_from_live_workers", float64(wrong), "shards", fmt.Sprintf("%d shards of live workers moved", wrong))
	run.Figure("imbalance", float64(imb), "shards", fmt.Sprintf("imbalance among survivors: %d", imb))
	return history.Verdict{}, nil
}

// onlyDeadShardsMove: about a TTL after the crash the dead worker's
// shards, and only those, moved, and the survivors are balanced.
func onlyDeadShardsMove(f *history.Findings) (bool, string) {
	moved, ok := f.Figure("moved")
	if !ok {
		return false, "the shards were never read after the crash"
	}
	wrong, imb, took := f.Figures["moved_from_live_workers"], f.Figures["imbalance"], f.Figures["move_s"]
	grant, _ := f.FirstEvent(history.KindIs(history.LeaseGranted, ""))
	ttl := time.Duration(grant.TTL) * time.Second
	say := fmt.Sprintf("the crashed worker's %.0f shards moved %.2fs after the crash (%s), %.0f shards of live workers moved, and the survivors end with imbalance %.0f",
		moved, took, history.TTLLabel(grant.TTL), wrong, imb)
	early := time.Duration(took*float64(time.Second)) < ttl*2/3-100*time.Millisecond
	if early {
		say += ", sooner than its lease could have run out"
	}
	return wrong == 0 && moved == shardsPerWorker && imb <= 1 && !early, say
}

// shardWorker is the worker of lesson 9 and lab 9.1: it joins under
// workers/ on one lease, hangs every shard key it claims on that same
// lease, and after joining and after every watch response rebalances from
// a fresh read toward its rank-based target: the sorted live names give it
// a rank r, and it should own shards/live shards, plus one if r < shards
// mod live. Above its target it releases shards; below, it claims free
// ones; it never takes a shard another worker holds.
func shardWorker(shards int) experiment.Body {
	return func(ctx context.Context, r *experiment.Replica) error {
		l, err := r.Grant(ctx, r.Run().TTL(), true)
		if err != nil {
			return err
		}
		cli := r.Client()
		if _, err := cli.Put(ctx, "workers/"+r.Name, r.Name, clientv3.WithLease(l.ID)); err != nil {
			return fmt.Errorf("join workers/: %w", err)
		}
		r.SetRole(experiment.RoleWorker, 0)
		rev, err := rebalanceShards(ctx, r, cli, l.ID, shards)
		if err != nil {
			return fmt.Errorf("first rebalance: %w", err)
		}
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		members := cli.Watch(wctx, "workers/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		owners := cli.Watch(wctx, "shards/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		// A fresh read now and then too, so a rebalance that failed is
		// tried again without waiting for the next change.
		again := time.NewTicker(time.Second)
		defer again.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-again.C:
			case <-l.Lost():
				return nil // its keys are gone with the lease; a crash or an expiry
			case resp, ok := <-members:
				if !ok || resp.Err() != nil {
					return nil
				}
			case resp, ok := <-owners:
				if !ok || resp.Err() != nil {
					return nil
				}
			}
			if _, err := rebalanceShards(ctx, r, cli, l.ID, shards); err != nil && ctx.Err() != nil {
				return nil
			}
		}
	}
}

// rebalanceShards reads the members and owners once and moves r toward its
// target; it returns the revision of the read.
func rebalanceShards(ctx context.Context, r *experiment.Replica, cli *clientv3.Client, lease clientv3.LeaseID, shards int) (int64, error) {
	owners, live, rev, err := readShardsAt(ctx, cli)
	if err != nil {
		return 0, err
	}
	sort.Strings(live)
	rank := sort.SearchStrings(live, r.Name)
	if rank == len(live) || live[rank] != r.Name {
		return rev, nil // its member key is gone: the lease expired
	}
	target := shards / len(live)
	if rank < shards%len(live) {
		target++
	}
	var mine []string
	for s, o := range owners {
		if o == r.Name {
			mine = append(mine, s)
		}
	}
	sort.Strings(mine)
	for len(mine) > target {
		s := mine[len(mine)-1]
		key := "shards/" + s
		if _, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(key), "=", r.Name)).Then(clientv3.OpDelete(key)).Commit(); err != nil {
			return rev, fmt.Errorf("release %s: %w", key, err)
		}
		mine = mine[:len(mine)-1]
		r.Emit(history.Event{Kind: history.Note, Text: fmt.Sprintf("released %s (target %d)", s, target)})
	}
	for i := 0; i < shards && len(mine) < target; i++ {
		s := shardName(i)
		if _, taken := owners[s]; taken {
			continue
		}
		key := "shards/" + s
		c := experiment.CreateKey{Key: key, Value: r.Name, Lease: lease}
		a, err := c.Commit(ctx, cli, r.Run().TryTimeout())
		if err != nil {
			return rev, fmt.Errorf("claim %s: %w", key, err)
		}
		if a.Succeeded {
			mine = append(mine, s)
			r.Emit(history.Event{Kind: history.ShardClaimed, Token: a.Revision, Facts: c.Facts(a), Text: fmt.Sprintf("claimed %s at revision %d (now owns %d, target %d)%s", s, a.Revision, len(mine), target, experiment.ResolvedText(a.Resolved))})
		}
	}
	return rev, nil
}

func shardName(i int) string { return fmt.Sprintf("shard-%02d", i) }

func readShards(ctx context.Context, cli *clientv3.Client) (owners map[string]string, live []string, err error) {
	owners, live, _, err = readShardsAt(ctx, cli)
	return owners, live, err
}

// readShardsAt reads the shard owners and the live workers in one
// transaction, so both come from the same revision, and returns it.
func readShardsAt(ctx context.Context, cli *clientv3.Client) (owners map[string]string, live []string, rev int64, err error) {
	resp, err := cli.Txn(ctx).Then(
		clientv3.OpGet("shards/", clientv3.WithPrefix()),
		clientv3.OpGet("workers/", clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("read shards/ and workers/: %w", err)
	}
	owners = map[string]string{}
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		owners[strings.TrimPrefix(string(kv.Key), "shards/")] = string(kv.Value)
	}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		live = append(live, string(kv.Value))
	}
	return owners, live, resp.Header.Revision, nil
}

func shardOwners(ctx context.Context, run *experiment.Run) map[string]string {
	owners, _, err := readShards(ctx, run.Admin())
	if err != nil {
		return nil
	}
	return owners
}

// spread is the difference between the most and least loaded of ws.
func spread(owners map[string]string, ws []*experiment.Replica) int {
	counts := map[string]int{}
	for _, o := range owners {
		counts[o]++
	}
	lo, hi := 1<<30, 0
	for _, w := range ws {
		lo, hi = min(lo, counts[w.Name]), max(hi, counts[w.Name])
	}
	return hi - lo
}

func describe(owners map[string]string, ws []*experiment.Replica) string {
	by := map[string][]string{}
	for s, o := range owners {
		by[o] = append(by[o], strings.TrimPrefix(s, "shard-"))
	}
	var parts []string
	for _, w := range ws {
		sort.Strings(by[w.Name])
		parts = append(parts, fmt.Sprintf("%s=%d [%s]", w.Name, len(by[w.Name]), strings.Join(by[w.Name], " ")))
	}
	return strings.Join(parts, "  ")
}
