package scenario

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// readerDelay is how long the slow reader of TestScenariosAtAReadersPace
// reads at every step.
const readerDelay = 15 * time.Second

// TestScenariosAtAReadersPace steps every scenario as a learner who reads
// each step for 15 s: the wait must not change the story (nothing races
// a lease while the script waits), so each still shows what it exists to
// show, and every event that carries etcd's answer says what it was. The
// scenarios on the server run side by side; those on the cluster, which
// stop members, one after the other beside them.
//
// It runs alone, in make test's pace step (make pacecheck sets
// PLAYGROUND_PACE_TESTS): eleven runs starting at once beside the other
// packages' -race builds and tests were starved for 17 s and more on this
// 2-core machine (no first owner within a step's window), which says
// nothing about a reader's pace. Alone under -race it takes about 160 s.
func TestScenariosAtAReadersPace(t *testing.T) {
	if os.Getenv("PLAYGROUND_PACE_TESTS") == "" {
		t.Skip("runs alone in make test's pace step: make pacecheck")
	}
	t.Parallel() // mostly waiting: beside the other slow one, after the rest
	srv, cluster := etcds(t)
	var onCluster []*experiment.Scenario
	var wg sync.WaitGroup
	// Goroutines rather than t.Parallel, which would run only as many
	// at once as there are cores: the runs mostly wait.
	for _, sc := range Scenarios() {
		if sc.NeedsCluster {
			onCluster = append(onCluster, sc)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(sc.Name, func(t *testing.T) { stepSlowly(t, sc, experiment.Env{Etcd: srv}) })
		}()
	}
	for _, sc := range onCluster {
		t.Run(sc.Name, func(t *testing.T) { stepSlowly(t, sc, experiment.Env{Cluster: cluster}) })
	}
	wg.Wait()
}

func stepSlowly(t *testing.T, sc *experiment.Scenario, env experiment.Env) {
	t.Helper()
	// TTL 2 s at least: eleven scenarios at once under the race
	// detector on two cores delay a 1 s lease's renewals past its TTL,
	// which is a loaded machine, not the learner's pace.
	var run *experiment.Run
	var v history.Verdict
	var err error
	worst, made := untilSteady(func() {
		if run, err = Start(context.Background(), sc.Name, history.Params{StepDelay: readerDelay, TTL: max(sc.DefaultTTL, 2)}, env, nil); err == nil {
			v, err = run.Wait()
		}
	})
	t.Logf("run %d time(s); the judged run's worst stall: %s", made, worst.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	h := run.History()
	steps := 0
	for _, e := range h.Events {
		if e.Kind == history.Phase {
			steps++
		}
	}
	if !v.Showed {
		t.Errorf("read at %s a step (%d steps), it did not show it: %s", readerDelay, steps, v.Sentence())
	}
	checkTextsAgree(t, h.Events)
	if r := Replay(&h); r.Showed != v.Showed || r.Sentence() != v.Sentence() {
		t.Errorf("replayed, the history gives another verdict:\n%s\nnot\n%s", r.Sentence(), v.Sentence())
	}
	t.Logf("%d steps in %s: %s", steps, h.Events[len(h.Events)-1].At.Round(time.Second), v.Sentence())
}
