package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/lessons"
)

var (
	shared struct {
		once    sync.Once
		srv     *embedetcd.Server
		cluster *embedetcd.Cluster
		err     error
	}
)

// etcds starts one server and one 3-member cluster for the whole package.
func etcds(t *testing.T) (*embedetcd.Server, *embedetcd.Cluster) {
	t.Helper()
	shared.once.Do(func() {
		log := embedetcd.WithLogFile(filepath.Join(os.TempDir(), "playground-experiment-test-etcd.log"))
		shared.srv, shared.err = embedetcd.Start(context.Background(), log)
		if shared.err != nil {
			return
		}
		shared.cluster, shared.err = embedetcd.StartCluster(context.Background(), 3, log)
	})
	if shared.err != nil {
		t.Fatalf("start etcd: %v", shared.err)
	}
	return shared.srv, shared.cluster
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		shared.cluster.Close()
	}
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}

// expectations per scenario: figures that must hold beyond Showed.
var expectations = map[string]func(t *testing.T, v history.Verdict, events []history.Event){
	"ttl-unlock-bug": func(t *testing.T, v history.Verdict, events []history.Event) {
		h := history.History{Scenario: "ttl-unlock-bug", Events: events}
		naive, versioned := history.Find(&h, naivePart), history.Find(&h, versionedPart)
		if naive == nil || versioned == nil || len(naive.TwoOwners) == 0 || len(versioned.TwoOwners) != 0 {
			t.Errorf("two owners at once: naive %+v, versioned %+v; want some and none", naive, versioned)
		}
		if judged := unlockQuestion.Judge(&h); !judged[0] {
			t.Errorf("P3's answers after the two unlocks judged %v: want the first option borne out", judged)
		}
	},
	"fencing": func(t *testing.T, v history.Verdict, events []history.Event) {
		h := history.History{Scenario: "fencing", Events: events}
		off, on := history.Find(&h, fencingPart(false)), history.Find(&h, fencingPart(true))
		if off == nil || on == nil || len(off.Stale) == 0 || !off.Stale[0].Accepted || len(on.Stale) == 0 || on.Stale[0].Accepted {
			t.Errorf("stale writes: fencing off %+v, on %+v", off, on)
		}
		if !slices.ContainsFunc(events, func(e history.Event) bool { return e.Kind == history.WriteRejected }) {
			t.Error("no write-rejected event")
		}
	},
	"lock-waiters": func(t *testing.T, v history.Verdict, _ []history.Event) {
		if w := v.Figures["predecessor_wakeups_per_release"]; w != 1 {
			t.Errorf("predecessor watch woke %.1f per release, want 1", w)
		}
	},
	"shard-ownership": func(t *testing.T, v history.Verdict, _ []history.Event) {
		if v.Figures["moved_from_live_workers"] != 0 || v.Figures["imbalance"] > 1 {
			t.Errorf("figures %v", v.Figures)
		}
	},
	"partitioned-primary": expectPartitionedPrimary, // case_studies_test.go
	"flapping-link":       expectFlappingLink,
	"zombie-controller":   expectZombieController,
	"leader-change":       expectLeaderChange,
}

// TestScenarios runs every registered scenario headless and checks that it
// showed what it exists to show, quickly, with a well-formed event stream.
// Scenarios on the single server run one after another, alongside those on
// the cluster.
func TestScenarios(t *testing.T) {
	srv, cluster := etcds(t)
	if len(Scenarios()) < 11 {
		t.Fatalf("%d scenarios registered, want 11", len(Scenarios()))
	}
	groups := map[string][]*experiment.Scenario{}
	for _, sc := range Scenarios() {
		g := "server"
		if sc.NeedsCluster || sc.OwnClusters {
			g = "cluster" // beside the server's: few, and long
		}
		groups[g] = append(groups[g], sc)
	}
	for g, scs := range groups {
		t.Run(g, func(t *testing.T) {
			t.Parallel()
			for _, sc := range scs {
				t.Run(sc.Name, func(t *testing.T) {
					var v history.Verdict
					var err error
					var events []history.Event
					var took time.Duration
					worst, made := untilSteady(func() {
						var mu sync.Mutex
						events = nil
						sink := func(e history.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
						start := time.Now()
						v, err = Execute(context.Background(), sc.Name, history.Params{}, experiment.Env{Etcd: srv, Cluster: cluster}, sink)
						took = time.Since(start)
					})
					t.Logf("run %d time(s); the judged run's worst stall: %s", made, worst.Round(time.Millisecond))
					if err != nil {
						t.Fatalf("run: %v", err)
					}
					if !v.Showed {
						t.Errorf("did not show it: %s", v.Sentence())
					}
					// A bound on a hang, not a speed: expbench measures the
					// real durations (the race detector slows etcd and the
					// clients several times over, a busy machine more).
					if limit := 60 * time.Second * raceSlowdown; took > limit {
						t.Errorf("took %s, want under %s", took, limit)
					}
					checkStream(t, events)
					h := history.History{Scenario: sc.Name, Params: sc.Normalize(history.Params{}), Events: events}
					checkPrediction(t, sc, &h)
					checkTextsAgree(t, events)
					checkTTLWording(t, events)
					checkResourceFlag(t, sc, events)
					checkNoActsWhileCrashed(t, events)
					if check := expectations[sc.Name]; check != nil {
						check(t, v, events)
					}
					t.Logf("%s in %s: %s", sc.Name, took.Round(time.Millisecond), v.Sentence())
				})
			}
		})
	}
}

// checkNoActsWhileCrashed: once a replica's history says it crashed, it
// does nothing (becomes owner, writes, renews) until its history says it
// came back: the screen draws a replica's state from its events, so a
// replica started again without a Restarted event is drawn crashed while
// it runs.
func checkNoActsWhileCrashed(t *testing.T, events []history.Event) {
	t.Helper()
	down := map[string]bool{}
	for _, e := range events {
		switch e.Kind {
		case history.Crashed:
			down[e.Replica] = true
		case history.Restarted:
			delete(down, e.Replica)
		case history.Acquired, history.WriteAccepted, history.WriteRejected, history.LeaseGranted, history.LeaseRenewed, history.Released:
			if down[e.Replica] {
				t.Errorf("at %s %s %s while its history says it is crashed: %s", e.At, e.Replica, e.Kind, e.Text)
				delete(down, e.Replica) // once per crash
			}
		}
	}
}

// checkResourceFlag: a scenario whose replicas write to the protected
// resource says so (the screen shows the resource row only then), and one
// that says so does write to it.
func checkResourceFlag(t *testing.T, sc *experiment.Scenario, events []history.Event) {
	t.Helper()
	wrote := slices.ContainsFunc(events, func(e history.Event) bool {
		return (e.Kind == history.WriteAccepted || e.Kind == history.WriteRejected) && e.Facts != nil && e.Facts.Op == "write"
	})
	if wrote != sc.Resource {
		t.Errorf("%s: Resource is %v but its replicas wrote to the resource: %v", sc.Name, sc.Resource, wrote)
	}
}

// checkStream: times never go backwards, the last event is the verdict,
// and every event survives a JSON round trip.
func checkStream(t *testing.T, events []history.Event) {
	t.Helper()
	if len(events) == 0 || events[len(events)-1].Kind != history.Finished {
		t.Fatalf("the stream does not end with a verdict event")
	}
	for i, e := range events {
		if i > 0 && e.At < events[i-1].At {
			t.Errorf("event %d at %s comes after one at %s", i, e.At, events[i-1].At)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %v: %v", e, err)
		}
		var back history.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if back.Kind != e.Kind || back.Text != e.Text || back.Token != e.Token || back.At.Milliseconds() != e.At.Milliseconds() {
			t.Errorf("round trip changed %+v into %+v", e, back)
		}
	}
}

// TestExternalCluster: on an external cluster (a Remote, here pointed at
// the shared server) ordinary scenarios run under the learner's prefix and
// the ones that stop members or enable auth refuse plainly.
func TestExternalCluster(t *testing.T) {
	srv, _ := etcds(t)
	remote, err := embedetcd.Connect(context.Background(), access.Settings{Endpoints: srv.Endpoints()}, "/playground/tester/")
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	for name, want := range map[string]error{
		"quorum":          experiment.ErrNeedsCluster,
		"leader-change":   experiment.ErrNeedsCluster,
		"least-privilege": experiment.ErrNeedsInProcess,
	} {
		if _, err := Execute(context.Background(), name, history.Params{}, experiment.Env{Etcd: remote}, nil); !errors.Is(err, want) {
			t.Errorf("%s on a remote: got %v, want %v", name, err, want)
		}
	}
	v, err := Execute(context.Background(), "cas-race", history.Params{Replicas: 5}, experiment.Env{Etcd: remote}, nil)
	if err != nil || !v.Showed {
		t.Fatalf("cas-race on a remote: %v, %s", err, v.Sentence())
	}
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// The run wrote under the learner's prefix and cleaned up after itself.
	resp, err := cli.Get(context.Background(), "/playground/tester/experiments/", clientv3WithPrefix()...)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d keys left under the learner's prefix after the run", resp.Count)
	}
	all, err := cli.Get(context.Background(), "experiments/cas-race/", clientv3WithPrefix()...)
	if err != nil {
		t.Fatal(err)
	}
	if all.Count != 0 {
		t.Errorf("%d keys written outside the learner's prefix", all.Count)
	}
}

func TestUnknownScenario(t *testing.T) {
	if _, err := Execute(context.Background(), "no-such-thing", history.Params{}, experiment.Env{}, nil); !errors.Is(err, experiment.ErrUnknown) {
		t.Fatalf("got %v, want ErrUnknown", err)
	}
}

// TestScenariosInCourseOrder checks the one list of scenarios: names are
// unique, each scenario lives in the file named after it, and the order is
// the order in which the built-in course's lessons first use them.
func TestScenariosInCourseOrder(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range Scenarios() {
		if seen[sc.Name] {
			t.Errorf("scenario %q listed twice", sc.Name)
		}
		seen[sc.Name] = true
		if Lookup(sc.Name) != sc {
			t.Errorf("Lookup(%q) does not return the listed scenario", sc.Name)
		}
		file := strings.ReplaceAll(sc.Name, "-", "_") + ".go"
		src, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(src), strconv.Quote(sc.Name)) {
			t.Errorf("scenario %q is not declared in %s", sc.Name, file)
		}
	}
	c, _ := lessons.Load(lessons.Sources{Course: content.FS()})
	var used []string
	for _, l := range c.Lessons {
		for _, name := range l.Experiments {
			if !slices.Contains(used, name) {
				used = append(used, name)
			}
		}
	}
	var listed []string
	for _, n := range Names() {
		if slices.Contains(used, n) {
			listed = append(listed, n)
		}
	}
	if !slices.Equal(listed, used) {
		t.Fatalf("scenarios in list order %v\nin course order      %v", listed, used)
	}
}

func TestNormalize(t *testing.T) {
	sc := Lookup("cas-race")
	for _, c := range []struct{ in, want int }{{0, 20}, {2, 5}, {80, 50}, {7, 7}} {
		if got := sc.Normalize(history.Params{Replicas: c.in}).Replicas; got != c.want {
			t.Errorf("replicas %d -> %d, want %d", c.in, got, c.want)
		}
	}
	if got := Lookup("leader-change").Normalize(history.Params{}).TTL; got != 4 {
		t.Errorf("default TTL %d, want 4", got)
	}
}

func clientv3WithPrefix() []clientv3.OpOption {
	return []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly()}
}
