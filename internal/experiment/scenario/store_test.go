package scenario

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// storeScript is a small scenario for the store's view: r1 takes a TTL
// lock (TTL 3s, not renewed) and three replicas queue in an election;
// check reads the store at each stage. It runs until check returns.
func storeScript(check func(ctx context.Context, run *experiment.Run, stage string) error) func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	return func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
		rs, err := run.NewReplicas(3)
		if err != nil {
			return history.Verdict{}, err
		}
		if err := check(ctx, run, "empty"); err != nil {
			return history.Verdict{}, err
		}
		l, f, err := lockTTL(ctx, rs[0], "lock", 3, false)
		if err != nil || l == nil {
			return history.Verdict{}, fmt.Errorf("lock: %+v %v", f, err)
		}
		if err := check(ctx, run, "locked"); err != nil {
			return history.Verdict{}, err
		}
		if _, err := l.unlock(ctx, rs[0], true); err != nil {
			return history.Verdict{}, err
		}
		if err := startFirstOwner(ctx, run, rs, leaderLoop("election/", 100*time.Millisecond, true), "election/"); err != nil {
			return history.Verdict{}, err
		}
		if err := check(ctx, run, "election"); err != nil {
			return history.Verdict{}, err
		}
		return history.Verdict{Showed: true}, nil
	}
}

// readUntil polls run.Store until ok accepts a reading, for at most 3 s.
func readUntil(ctx context.Context, run *experiment.Run, ok func(experiment.StoreState) bool) (experiment.StoreState, error) {
	var st experiment.StoreState
	if experiment.WaitFor(ctx, 3*time.Second, func() bool { st = run.Store(); return !st.At.IsZero() && ok(st) }) {
		return st, nil
	}
	return st, fmt.Errorf("no matching reading; last: %+v", st)
}

func checkStoreStages(ctx context.Context, run *experiment.Run, stage string) error {
	switch stage {
	case "empty":
		st, err := readUntil(ctx, run, func(st experiment.StoreState) bool { return true })
		if err != nil {
			return err
		}
		if len(st.Keys) != 0 || st.Err != "" {
			return fmt.Errorf("a fresh run's store holds %+v (err %q)", st.Keys, st.Err)
		}
	case "locked":
		st, err := readUntil(ctx, run, func(st experiment.StoreState) bool { return len(st.Keys) == 1 })
		if err != nil {
			return err
		}
		k := st.Keys[0]
		if k.Key != "lock" || k.Value != "r1" || k.Version != 1 || k.CreateRevision == 0 || k.ModRevision != k.CreateRevision || k.Lease == 0 {
			return fmt.Errorf("lock key read as %+v", k)
		}
		l, ok := st.Leases[k.Lease]
		if !ok || l.Gone || l.GrantedTTL != 3 {
			return fmt.Errorf("lock's lease read as %+v (ok %v)", l, ok)
		}
		// The grant was answered in this run, so the time left is
		// sharpened from etcd's whole seconds and under the TTL.
		if !l.Precise || l.Left <= time.Second || l.Left > 3*time.Second {
			return fmt.Errorf("lease left %s (precise %v), want a precise reading in (1s, 3s]", l.Left, l.Precise)
		}
		// It drains in later readings: etcd's clock, not a frozen copy.
		if _, err := readUntil(ctx, run, func(st2 experiment.StoreState) bool {
			l2, ok := st2.Leases[k.Lease]
			return ok && l2.Left < l.Left-200*time.Millisecond
		}); err != nil {
			return fmt.Errorf("the lease's time left did not drain: %w", err)
		}
	case "election":
		st, err := readUntil(ctx, run, func(st experiment.StoreState) bool { return len(st.Keys) == 3 })
		if err != nil {
			return err
		}
		gs := st.Groups()
		if len(gs) != 1 || gs[0].Dir != "election/" || !gs[0].Distinct() || gs[0].Keys[0].Value != "r1" {
			return fmt.Errorf("groups %+v, want one election/ queue with r1 oldest", gs)
		}
		if l := st.Leases[gs[0].Keys[0].Lease]; l.GrantedTTL != 1 || l.Gone {
			return fmt.Errorf("the holder's lease read as %+v", l)
		}
	}
	return nil
}

// TestStoreView: the store's view reads the run's keys with their
// revisions, version and lease, and the holder's lease draining, on the
// in-process etcd and on a shared cluster under the learner's prefix
// (where the keys read the same, without the prefix).
func TestStoreView(t *testing.T) {
	srv, _ := etcds(t)
	remote, err := embedetcd.Connect(context.Background(), access.Settings{Endpoints: srv.Endpoints()}, "/playground/store-tester/")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	for name, etcd := range map[string]embedetcd.Etcd{"in-process": srv, "shared": remote} {
		t.Run(name, func(t *testing.T) {
			sc := &experiment.Scenario{Name: "store-test", DefaultReplicas: 3, DefaultTTL: 1, Run: storeScript(checkStoreStages)}
			run, err := experiment.Start(context.Background(), sc, history.Params{}, experiment.Env{Etcd: etcd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if v, err := run.Wait(); err != nil || !v.Showed {
				t.Fatalf("%v %s", err, v.Sentence())
			}
		})
	}
}

func TestStoreGroups(t *testing.T) {
	st := experiment.StoreState{Keys: []history.StoreKey{
		{Key: "workers/w1", Value: "w1", CreateRevision: 2},
		{Key: "leader", Value: "r1", CreateRevision: 3},
		{Key: "shards/00", Value: "w1", CreateRevision: 4},
		{Key: "workers/w2", Value: "w2", CreateRevision: 5},
		{Key: "shards/01", Value: "w2", CreateRevision: 6},
		{Key: "shards/02", Value: "w1", CreateRevision: 7},
	}}
	gs := st.Groups()
	var got []string
	for _, g := range gs {
		got = append(got, fmt.Sprintf("%s:%d:%v", g.Dir, len(g.Keys), g.Distinct()))
	}
	// A top-level key stands alone; keys under a directory go together,
	// in the order of their oldest key.
	if want := "workers/:2:true :1:true shards/:3:false"; strings.Join(got, " ") != want {
		t.Fatalf("groups %v, want %s", got, want)
	}
	vals, counts := gs[2].Owners()
	if strings.Join(vals, ",") != "w1,w2" || counts["w1"] != 2 || counts["w2"] != 1 {
		t.Fatalf("owners %v %v", vals, counts)
	}
}

// TestScriptSaysWhatItWaitsFor: a replica the learner pauses before the
// step that needs it makes the script say at once that it waits for it,
// and the script goes on when the replica resumes.
func TestScriptSaysWhatItWaitsFor(t *testing.T) {
	srv, _ := etcds(t)
	resumed := make(chan struct{})
	sc := &experiment.Scenario{Name: "await-test", DefaultReplicas: 1, DefaultTTL: 1,
		Run: func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
			rs, err := run.NewReplicas(1)
			if err != nil {
				return history.Verdict{}, err
			}
			rs[0].Pause(history.ByLearner) // as the learner would, before the step
			go func() {
				// Resume once the script has said it waits.
				experiment.WaitFor(ctx, 5*time.Second, func() bool {
					for _, e := range run.Events(0) {
						if e.Kind == history.Waiting {
							return true
						}
					}
					return false
				})
				close(resumed)
				rs[0].Resume(history.ByLearner)
			}()
			if l, f, err := lockTTL(ctx, rs[0], "lock", 1, false); err != nil || l == nil {
				return history.Verdict{}, fmt.Errorf("lock after resume: %+v %v", f, err)
			}
			return history.Verdict{Showed: true}, nil
		}}
	run, err := experiment.Start(context.Background(), sc, history.Params{}, experiment.Env{Etcd: srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := run.Wait()
	if err != nil || !v.Showed {
		t.Fatalf("%v %s", err, v.Sentence())
	}
	select {
	case <-resumed:
	default:
		t.Fatal("the script never said it was waiting")
	}
	var waiting *history.Event
	for _, e := range run.Events(0) {
		if e.Kind == history.Waiting {
			waiting = &e
			break
		}
	}
	if waiting == nil || waiting.Replica != "r1" || waiting.Value != 1 || !strings.Contains(waiting.Text, "r1 is paused") || !strings.Contains(waiting.Text, "take the lock") {
		t.Fatalf("waiting event %+v", waiting)
	}
	if !slices.ContainsFunc(run.Events(0), func(e history.Event) bool {
		return e.Kind == history.Waiting && e.Value == 0 && e.Text == "the script goes on: r1 is free"
	}) {
		t.Fatal("no event says the script goes on")
	}
}

// TestScriptWaitsForAnyOfSeveral: a takeover any of several replicas can
// make waits, and says so, only while the learner holds them all.
func TestScriptWaitsForAnyOfSeveral(t *testing.T) {
	srv, _ := etcds(t)
	sc := &experiment.Scenario{Name: "await-any-test", DefaultReplicas: 2, DefaultTTL: 1,
		Run: func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
			rs, err := run.NewReplicas(2)
			if err != nil {
				return history.Verdict{}, err
			}
			if err := run.AwaitAny(ctx, rs, "take over"); err != nil {
				return history.Verdict{}, err
			}
			if slices.ContainsFunc(run.Events(0), func(e history.Event) bool { return e.Kind == history.Waiting }) {
				return history.Verdict{}, errors.New("waited although nobody was held")
			}
			rs[0].Pause(history.ByLearner)
			rs[1].Partition(history.ByLearner)
			go func() {
				experiment.WaitFor(ctx, 5*time.Second, func() bool {
					return slices.ContainsFunc(run.Events(0), func(e history.Event) bool { return e.Kind == history.Waiting && e.Value == 1 })
				})
				rs[1].Heal(history.ByLearner)
			}()
			if err := run.AwaitAny(ctx, rs, "take over"); err != nil {
				return history.Verdict{}, err
			}
			return history.Verdict{Showed: true}, nil
		}}
	run, err := experiment.Start(context.Background(), sc, history.Params{}, experiment.Env{Etcd: srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := run.Wait(); err != nil || !v.Showed {
		t.Fatalf("%v %s", err, v.Sentence())
	}
	var texts []string
	for _, e := range run.Events(0) {
		if e.Kind == history.Waiting {
			texts = append(texts, fmt.Sprintf("%v %s", e.Value, e.Text))
		}
	}
	want := []string{"1 the script waits for one of r1, r2 to take over: r1 is paused, r2 is cut off", "0 the script goes on: r2 is free"}
	if !slices.Equal(texts, want) {
		t.Fatalf("waiting events %q\nwant %q", texts, want)
	}
}

// oldTTLForms are the TTL and time-left wordings the course no longer
// uses: every event says "TTL 5s" and "0.6s left" (TTLLabel, LeftLabel).
var oldTTLForms = regexp.MustCompile(`TTL \d+ s\b|\d+ s lease|TTL back to|says \d+ s\b|\d s left`)

func checkTTLWording(t *testing.T, events []history.Event) {
	t.Helper()
	for _, e := range events {
		if m := oldTTLForms.FindString(e.Text); m != "" {
			t.Errorf("event %q uses the old TTL wording %q", e.Text, m)
		}
	}
}

func TestLabels(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{600 * time.Millisecond, "0.6s left"}, {-time.Second, "0.0s left"}, {12500 * time.Millisecond, "12s left"}} {
		if got := history.LeftLabel(c.d); got != c.want {
			t.Errorf("LeftLabel(%s) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := history.TTLLabel(5); got != "TTL 5s" {
		t.Errorf("TTLLabel(5) = %q", got)
	}
	if !oldTTLForms.MatchString("renewed, TTL back to 1 s") || oldTTLForms.MatchString("lease 694d granted, TTL 1s") {
		t.Error("the old-wording pattern does not tell old from new")
	}
}

// TestStoreFinalReading: what the script leaves behind is read before the
// run cleans up, though the script's last write came faster than the
// observer reads.
func TestStoreFinalReading(t *testing.T) {
	srv, _ := etcds(t)
	sc := &experiment.Scenario{Name: "store-final-test", DefaultReplicas: 1, DefaultTTL: 1,
		Run: func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
			if _, err := readUntil(ctx, run, func(experiment.StoreState) bool { return true }); err != nil {
				return history.Verdict{}, err
			}
			_, err := run.Admin().Put(ctx, "left-behind", "x")
			return history.Verdict{Showed: err == nil}, err
		}}
	run, err := experiment.Start(context.Background(), sc, history.Params{}, experiment.Env{Etcd: srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := run.Wait(); err != nil || !v.Showed {
		t.Fatalf("%v %s", err, v.Sentence())
	}
	st := run.Store()
	if len(st.Keys) != 1 || st.Keys[0].Key != "left-behind" || st.Keys[0].Value != "x" {
		t.Fatalf("final reading %+v", st)
	}
}

// TestStepModeWithASlowLearner: a first run is in step mode, and a learner
// takes time at each step. A scenario whose effect depends on a running
// clock must still show it: leader-change waits only
// before the lease is taken (it said "TimeToLive says -1s" when it waited
// at every step).
func TestStepModeWithASlowLearner(t *testing.T) {
	_, cluster := etcds(t)
	run, err := Start(context.Background(), "leader-change", history.Params{Step: true}, experiment.Env{Cluster: cluster}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var steps atomic.Int32
	go func() {
		for {
			select {
			case <-run.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			if run.AtStep() {
				time.Sleep(1500 * time.Millisecond) // reading the screen
				steps.Add(1)
				run.Step()
			}
		}
	}()
	v, err := run.Wait()
	if err != nil || !v.Showed {
		t.Fatalf("in step mode: %v: %s", err, v.Sentence())
	}
	if steps.Load() == 0 {
		t.Fatal("step mode never waited")
	}
}

// TestStoreViewAfterAuthIsOn: least-privilege turns etcd's authentication
// on, after which the run's admin client is refused; the store's view goes
// on reading as root, so its final reading shows the key the worker failed
// to delete and the shard it wrote (it said "(no key)" before).
func TestStoreViewAfterAuthIsOn(t *testing.T) {
	run, err := Start(context.Background(), "least-privilege", history.Params{}, experiment.Env{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run.Store() // a screen is watching: the observer runs
	v, err := run.Wait()
	if err != nil || !v.Showed {
		t.Fatalf("%v %s", err, v.Sentence())
	}
	st := run.Store()
	got := map[string]string{}
	for _, k := range st.Keys {
		got[k.Key] = k.Value
	}
	if st.Err != "" || got["migrations/leader"] != "migrator-1" || got["stream/shards/07"] != "worker-7" {
		t.Fatalf("final reading after auth was enabled: keys %v, error %q", got, st.Err)
	}
}
