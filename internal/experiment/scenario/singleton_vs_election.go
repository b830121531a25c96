package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// singletonVsElectionScenario is the scenario singleton-vs-election.
var singletonVsElectionScenario = &experiment.Scenario{
	Name:            "singleton-vs-election",
	Title:           "A lock key without a lease vs a leased election",
	Summary:         "An owner marks itself with a plain key (no lease) and crashes while the others wait for the key to be free. Then the same replicas run a leased election and its owner crashes.",
	Faults:          "crash the owner (twice)",
	DefaultReplicas: 3, MinReplicas: 2, MaxReplicas: 10,
	DefaultTTL: 1,
	Run:        runSingleton,
	Predict:    singletonQuestion,
	Shows: []history.Property{
		{Name: "plain-key-stuck", Part: plainKeyPart, Check: plainKeyStuck},
		{Name: "leased-failover", Part: leasedPart, Check: leasedFailover},
	},
}

const (
	plainKeyPart = "plain key"
	leasedPart   = "leased election"
)

func runSingleton(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	rs, err := run.NewReplicas(run.Params.Replicas)
	if err != nil {
		return history.Verdict{}, fmt.Errorf("set up: %w", err)
	}
	run.Part(plainKeyPart)
	if err := plainKeyStory(ctx, run, rs); err != nil {
		return history.Verdict{}, fmt.Errorf("%s: %w", plainKeyPart, err)
	}
	run.Part(leasedPart)
	if err := leasedStory(ctx, run, rs); err != nil {
		return history.Verdict{}, fmt.Errorf("%s: %w", leasedPart, err)
	}
	return history.Verdict{}, nil
}

// plainKeyStory: r1 takes a plain key, crashes, and the script watches
// for two TTLs and a second.
func plainKeyStory(ctx context.Context, run *experiment.Run, rs []*experiment.Replica) error {
	window := 2*run.TTLDuration() + time.Second
	if err := run.Phase(ctx, "part 1: the owner writes a plain key (no lease); the others take it only if it is free"); err != nil {
		return err
	}
	for _, r := range rs {
		if err := r.Start(plainKeyTaker("singleton")); err != nil {
			return err
		}
		// let the first replica win, so the story is about r1
		if r == rs[0] && !experiment.WaitFor(ctx, 2*time.Second, func() bool { return r.State().Role == experiment.RoleOwner }) {
			return errors.New("r1 never took the plain key")
		}
	}
	if err := run.Phase(ctx, fmt.Sprintf("crash r1 and watch for %s", window)); err != nil {
		return err
	}
	rs[0].Crash(history.ByScript)
	experiment.WaitFor(ctx, window, func() bool { return anyOwner(rs[1:]) })
	g, err := run.Admin().Get(ctx, "singleton")
	if err != nil {
		return fmt.Errorf("read the plain key: %w", err)
	}
	f := &history.Facts{Op: "get", Key: "singleton", Revision: g.Header.Revision, Succeeded: true}
	text := "etcd holds no singleton key"
	if len(g.Kvs) > 0 {
		kv := experiment.StoreKeyOf(g.Kvs[0])
		f.Held = &kv
		text = fmt.Sprintf("%s after the crash etcd still holds singleton = %s (revision %d)", window, kv.Value, kv.ModRevision)
	}
	run.Emit(history.Event{Kind: history.Note, Facts: f, Text: text})
	for _, r := range rs {
		r.Crash(history.ByScript)
	}
	return nil
}

// leasedStory: the same replicas in a leased election; r1 crashes.
func leasedStory(ctx context.Context, run *experiment.Run, rs []*experiment.Replica) error {
	if err := run.Phase(ctx, fmt.Sprintf("part 2: the same replicas run a leased election (%s)", history.TTLLabel(run.TTL()))); err != nil {
		return err
	}
	for i, r := range rs {
		if err := r.StartWith(leaderLoop("election/", 200*time.Millisecond, true)); err != nil {
			return err
		}
		if i == 0 && !experiment.WaitFor(ctx, 3*time.Second, func() bool { return r.State().Role == experiment.RoleOwner }) {
			return errors.New("r1 never won the election")
		}
	}
	if !waitQueue(ctx, run, "election/", len(rs)) {
		return errors.New("the replicas never all joined the election")
	}
	if err := run.Phase(ctx, "crash r1, the elected owner"); err != nil {
		return err
	}
	if err := run.AwaitAny(ctx, rs[1:], "take over from the crashed owner"); err != nil {
		return err
	}
	rs[0].Crash(history.ByScript)
	experiment.WaitFor(ctx, run.TTLDuration()+3*time.Second, func() bool { return anyOwner(rs[1:]) })
	return nil
}

// plainKeyStuck: after the owner of a plain key crashed, etcd kept the
// key and nobody took over.
func plainKeyStuck(f *history.Findings) (bool, string) {
	c, ok := f.FirstEvent(history.KindIs(history.Crashed, "r1"))
	if !ok {
		return false, "r1 never crashed"
	}
	if next, ok := f.FirstEvent(func(e history.Event) bool { return e.Kind == history.Acquired && e.At > c.At }); ok {
		return false, fmt.Sprintf("with a plain key %s took over %.2fs after r1 crashed (%s)", next.Replica, (next.At - c.At).Seconds(), next.Text)
	}
	read, ok := f.LastEvent(func(e history.Event) bool {
		return e.Kind == history.Note && e.Facts != nil && e.Facts.Key == "singleton"
	})
	if !ok || read.Facts.Held == nil {
		return false, "with a plain key nobody took over, but etcd no longer held the key"
	}
	return true, fmt.Sprintf("with a plain key nobody took over after r1 crashed: %s", read.Text)
}

// leasedFailover: with a leased election the next owner comes about a
// TTL after the crash.
func leasedFailover(f *history.Findings) (bool, string) {
	ok, say := promptFailover(f)
	return ok, "in the leased election, " + say
}

func anyOwner(rs []*experiment.Replica) bool {
	for _, r := range rs {
		if r.State().Role == experiment.RoleOwner {
			return true
		}
	}
	return false
}

// plainKeyTaker tries every 100 ms to create key (no lease) and, once it
// has, acts as owner forever.
func plainKeyTaker(key string) experiment.Body {
	return func(ctx context.Context, r *experiment.Replica) error {
		for {
			cli := r.Client()
			if cli == nil {
				return nil
			}
			c := experiment.CreateKey{Key: key, Value: r.Name}
			a, err := c.Commit(ctx, cli, r.Run().TryTimeout())
			if err == nil && a.Succeeded {
				r.SetRole(experiment.RoleOwner, a.Revision)
				r.Emit(history.Event{Kind: history.Acquired, Token: a.Revision, Facts: c.Facts(a), Text: fmt.Sprintf("wrote the plain key at revision %d: owner (no lease, no TTL)%s", a.Revision, experiment.ResolvedText(a.Resolved))})
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
func waitQueue(ctx context.Context, run *experiment.Run, prefix string, n int) bool {
	return experiment.WaitFor(ctx, 5*time.Second, func() bool {
		g, err := run.Admin().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && int(g.Count) >= n
	})
}
