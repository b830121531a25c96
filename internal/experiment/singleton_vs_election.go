package experiment

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// singletonVsElectionScenario is the scenario singleton-vs-election.
var singletonVsElectionScenario = &Scenario{
	Name:            "singleton-vs-election",
	Title:           "A lock key without a lease vs a leased election",
	Summary:         "An owner marks itself with a plain key and crashes: the key stays and nobody takes over. The same crash under a leased election fails over about one TTL later.",
	Faults:          "crash the owner (twice)",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runSingleton,
}

func runSingleton(ctx context.Context, run *Run) (Verdict, error) {
	rs, err := run.newReplicas(run.Params.Replicas)
	if err != nil {
		return Verdict{}, err
	}
	ttl := run.tTLDuration()
	window := 2*ttl + time.Second

	if err := run.Phase(ctx, "part 1: the owner writes a plain key (no lease); the others take it only if it is free"); err != nil {
		return Verdict{}, err
	}
	for _, r := range rs {
		if err := r.Start(plainKeyTaker("singleton")); err != nil {
			return Verdict{}, err
		}
		if r == rs[0] {
			// let the first replica win, so the story is about r1
			if !waitFor(ctx, 2*time.Second, func() bool { return r.State().Role == RoleOwner }) {
				return Verdict{}, fmt.Errorf("r1 never took the plain key")
			}
		}
	}
	if err := run.Phase(ctx, fmt.Sprintf("crash r1 and watch for %s", window)); err != nil {
		return Verdict{}, err
	}
	rs[0].crash(ByScript)
	crashed := time.Now()
	takeover := waitFor(ctx, window, func() bool { return anyOwner(rs[1:]) })
	g, err := run.Admin().Get(ctx, "singleton")
	if err != nil {
		return Verdict{}, fmt.Errorf("read plain key: %w", err)
	}
	stuck := !takeover && len(g.Kvs) == 1 && string(g.Kvs[0].Value) == "r1"
	if stuck {
		run.Note("after %s the key still says r1 and nobody else owns: stuck until a human deletes it", time.Since(crashed).Round(100*time.Millisecond))
	}
	for _, r := range rs {
		r.crash(ByScript)
	}

	if err := run.Phase(ctx, fmt.Sprintf("part 2: the same replicas run a leased election (%s)", TTLLabel(run.TTL()))); err != nil {
		return Verdict{}, err
	}
	for i, r := range rs {
		if err := r.startWith(leaderLoop("election/", 200*time.Millisecond, true)); err != nil {
			return Verdict{}, err
		}
		if i == 0 && !waitFor(ctx, 3*time.Second, func() bool { return r.State().Role == RoleOwner }) {
			return Verdict{}, fmt.Errorf("r1 never won the election")
		}
	}
	if !waitQueue(ctx, run, "election/", len(rs)) {
		return Verdict{}, fmt.Errorf("the replicas never all joined the election")
	}
	if err := run.Phase(ctx, "crash r1, the elected owner"); err != nil {
		return Verdict{}, err
	}
	if err := run.awaitAny(ctx, rs[1:], "take over from the crashed owner"); err != nil {
		return Verdict{}, err
	}
	rs[0].crash(ByScript)
	crashed = time.Now()
	failover := waitFor(ctx, ttl+3*time.Second, func() bool { return anyOwner(rs[1:]) })
	gap := time.Since(crashed)
	v := Verdict{Showed: stuck && failover, Figures: map[string]float64{"failover_s": gap.Seconds()}}
	if failover {
		run.measure(gap.Seconds(), "s", fmt.Sprintf("a new owner %.2fs after the crash (%s)", gap.Seconds(), TTLLabel(run.TTL())))
	}
	switch {
	case v.Showed:
		v.Summary = fmt.Sprintf("Without a lease the crashed owner's key stayed for good and nobody took over; with a leased election a new owner took over %.2fs after the crash (%s).", gap.Seconds(), TTLLabel(run.TTL()))
	case !stuck:
		v.Summary = "Unexpected: someone took over the plain key after the crash."
	default:
		v.Summary = "Unexpected: nobody took over in the leased election."
	}
	return v, nil
}

func anyOwner(rs []*Replica) bool {
	for _, r := range rs {
		if r.State().Role == RoleOwner {
			return true
		}
	}
	return false
}

// plainKeyTaker tries every 100 ms to create key (no lease) and, once it
// has, acts as owner forever.
func plainKeyTaker(key string) Body {
	return func(ctx context.Context, r *Replica) error {
		for {
			cli := r.Client()
			if cli == nil {
				return nil
			}
			resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, r.Name)).Commit()
			if err == nil && resp.Succeeded {
				r.setRole(RoleOwner, resp.Header.Revision)
				r.Emit(Event{Kind: Acquired, Token: resp.Header.Revision, Text: "wrote the plain key: owner (no lease, no TTL)"})
				<-ctx.Done()
				return nil
			}
			if err := r.Sleep(ctx, 100*time.Millisecond); err != nil {
				return nil
			}
		}
	}
}

// waitQueue waits until n keys are queued under prefix.
func waitQueue(ctx context.Context, run *Run, prefix string, n int) bool {
	return waitFor(ctx, 5*time.Second, func() bool {
		g, err := run.Admin().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && int(g.Count) >= n
	})
}
