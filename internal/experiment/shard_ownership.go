package experiment

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// shardOwnershipScenario is the scenario shard-ownership.
var shardOwnershipScenario = &Scenario{
	Name:            "shard-ownership",
	Title:           "Shards with per-shard leases: kill a worker",
	Summary:         "Workers split the shards, one lease per shard, each taking a free shard only while it owns no more than the least loaded worker. Kill one: about a TTL later only its shards move, and the survivors end within one shard of each other.",
	Faults:          "crash a worker",
	DefaultReplicas: 4, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runShards,
}

const shardsPerWorker = 3

func runShards(ctx context.Context, run *Run) (Verdict, error) {
	v := Verdict{Figures: map[string]float64{}}
	n := run.Params.Replicas
	shards := n * shardsPerWorker
	ws := make([]*Replica, n)
	for i := range ws {
		r, err := run.newReplica(fmt.Sprintf("w%d", i+1))
		if err != nil {
			return v, err
		}
		ws[i] = r
	}
	if err := run.Phase(ctx, fmt.Sprintf("%d workers share %d shards; each shard key carries its own lease", n, shards)); err != nil {
		return v, err
	}
	for _, w := range ws {
		if err := w.Start(shardWorker(shards)); err != nil {
			return v, err
		}
	}
	var before map[string]string
	if !waitFor(ctx, 5*time.Second, func() bool {
		before = shardOwners(ctx, run)
		return len(before) == shards && spread(before, ws) == 0
	}) {
		return v, fmt.Errorf("the shards were never spread evenly: %s", describe(shardOwners(ctx, run), ws))
	}
	run.Note("balanced: %s", describe(before, ws))

	victim := ws[0]
	if err := run.Phase(ctx, fmt.Sprintf("crash %s: its shard leases are orphaned, not revoked", victim.Name)); err != nil {
		return v, err
	}
	victim.Crash()
	crashed := time.Now()
	var after map[string]string
	moved := waitFor(ctx, run.tTLDuration()+5*time.Second, func() bool {
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
	if err := sleep(ctx, 300*time.Millisecond); err != nil {
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
	run.measure(took.Seconds(), "s", fmt.Sprintf("%d shards moved %.2f s after the crash (TTL %d s)", movedN, took.Seconds(), run.TTL()))
	run.measure(float64(imb), "shards", fmt.Sprintf("imbalance among survivors: %d", imb))
	v.Figures["moved"], v.Figures["moved_from_live_workers"] = float64(movedN), float64(wrong)
	v.Figures["imbalance"], v.Figures["move_s"] = float64(imb), took.Seconds()
	v.Showed = wrong == 0 && movedN == shardsPerWorker && imb <= 1 && took >= run.tTLDuration()-300*time.Millisecond
	v.Summary = fmt.Sprintf("%s's %d shards moved %.2f s after the crash (TTL %d s); %d shards of live workers moved; the survivors end with imbalance %d.", victim.Name, movedN, took.Seconds(), run.TTL(), wrong, imb)
	if !v.Showed {
		v.Summary = "Unexpected: " + v.Summary
	}
	return v, nil
}

// shardWorker registers itself under workers/ and claims free shards, one
// per 100 ms tick, while it owns no more than the least loaded live
// worker. Every shard key is bound to a lease of its own.
func shardWorker(shards int) Body {
	return func(ctx context.Context, r *Replica) error {
		wl, err := r.Grant(ctx, r.run.TTL(), true)
		if err != nil {
			return err
		}
		cli := r.Client()
		if _, err := cli.Put(ctx, "workers/"+r.Name, r.Name, clientv3.WithLease(wl.ID)); err != nil {
			return err
		}
		r.setRole(RoleWorker, 0)
		for {
			if err := r.Sleep(ctx, 100*time.Millisecond); err != nil {
				return nil
			}
			owners, live, err := readShards(ctx, cli)
			if err != nil {
				continue
			}
			counts := map[string]int{}
			for _, w := range live {
				counts[w] = 0
			}
			for _, o := range owners {
				counts[o]++
			}
			least := shards
			for _, c := range counts {
				least = min(least, c)
			}
			if counts[r.Name] > least {
				continue
			}
			free := ""
			for i := range shards {
				s := shardName(i)
				if _, taken := owners[s]; !taken {
					free = s
					break
				}
			}
			if free == "" {
				continue
			}
			sl, err := r.grant(ctx, r.run.TTL(), true, true)
			if err != nil {
				continue
			}
			resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision("shards/"+free), "=", 0)).
				Then(clientv3.OpPut("shards/"+free, r.Name, clientv3.WithLease(sl.ID))).Commit()
			if err != nil || !resp.Succeeded {
				sl.abandon(ctx)
				continue
			}
			r.Emit(Event{Kind: ShardClaimed, Token: resp.Header.Revision, Text: fmt.Sprintf("claimed %s (now owns %d)", free, counts[r.Name]+1)})
		}
	}
}

func shardName(i int) string { return fmt.Sprintf("shard-%02d", i) }

func readShards(ctx context.Context, cli *clientv3.Client) (owners map[string]string, live []string, err error) {
	g, err := cli.Get(ctx, "shards/", clientv3.WithPrefix())
	if err != nil {
		return nil, nil, err
	}
	owners = map[string]string{}
	for _, kv := range g.Kvs {
		owners[strings.TrimPrefix(string(kv.Key), "shards/")] = string(kv.Value)
	}
	w, err := cli.Get(ctx, "workers/", clientv3.WithPrefix())
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range w.Kvs {
		live = append(live, string(kv.Value))
	}
	return owners, live, nil
}

func shardOwners(ctx context.Context, run *Run) map[string]string {
	owners, _, err := readShards(ctx, run.Admin())
	if err != nil {
		return nil
	}
	return owners
}

// spread is the difference between the most and least loaded of ws.
func spread(owners map[string]string, ws []*Replica) int {
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

func describe(owners map[string]string, ws []*Replica) string {
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
