// Command expbench measures how faithfully the experiments reproduce
// etcd's behaviour and how they hold up as a learner uses them: the
// failover gap after a crash against the TTL, every scenario's verdict
// and duration headless, the same verdict again from its recorded history
// (written, read back and replayed without etcd), every scenario stepped
// by a reader who takes a while at each step, and how soon an event is
// on the experiment screen's drawn view (every scenario run through the
// screen, as the TUI runs it).
//
//	go run ./internal/tools/expbench [-runs 20] [-ttl 1] [-step-learner 15s]
//
// It exits 1 if a figure misses its target.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/statedir"
)

// latencyBar is the most an event may take to reach the screen, median
// and 99th percentile.
const latencyBar = 100 * time.Millisecond

func main() {
	runs := flag.Int("runs", 20, "runs of the failover figure")
	ttl := flag.Int64("ttl", 1, "lease TTL in seconds for the failover figure")
	skipDurations := flag.Bool("skip-durations", false, "do not run every scenario headless (nor record and replay it)")
	learner := flag.Duration("step-learner", 0, "also step every scenario, taking this long at each step as a reading learner would (e.g. 15s)")
	flag.Parse()
	if err := bench(*runs, *ttl, !*skipDurations, *learner); err != nil {
		fmt.Fprintln(os.Stderr, "expbench:", err)
		os.Exit(1)
	}
}

func bench(runs int, ttl int64, durations bool, learner time.Duration) error {
	ctx := context.Background()
	// The screen saves every run's history in the state directory: a
	// directory of the bench's own, not the learner's.
	stateDir, err := os.MkdirTemp("", "playground-expbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stateDir)
	if err := os.Setenv(statedir.EnvOverride, stateDir); err != nil {
		return err
	}
	logOpt := embedetcd.WithLogFile(filepath.Join(os.TempDir(), "playground-expbench-etcd.log"))
	srv, err := embedetcd.Start(ctx, logOpt)
	if err != nil {
		return err
	}
	defer srv.Close()
	env := experiment.Env{Etcd: srv}
	ok, err := failoverFigure(ctx, env, runs, ttl)
	if err != nil {
		return err
	}
	var lat []time.Duration
	if durations {
		ok = everyScenario(ctx, env) && ok
		var good bool
		lat, good = screenLatencies(ctx, srv, stateDir)
		ok = good && ok
	}
	if learner > 0 {
		ok = stepEveryScenario(ctx, env, learner) && ok
	}
	if len(lat) > 0 {
		ok = reportLatency(lat) && ok
	}
	if !ok {
		return fmt.Errorf("a figure missed its target")
	}
	return nil
}

// failoverFigure measures the gap between an owner's crash and the next
// owner, runs times; 19 in 20 must be within the TTL and the slack.
func failoverFigure(ctx context.Context, env experiment.Env, runs int, ttl int64) (bool, error) {
	limit := time.Duration(ttl)*time.Second + scenario.FailoverSlack
	var gaps []time.Duration
	within := 0
	for range runs {
		g, err := scenario.FailoverGap(ctx, env, 3, ttl)
		if err != nil {
			return false, fmt.Errorf("failover: %w", err)
		}
		gaps = append(gaps, g)
		if g <= limit {
			within++
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	fmt.Printf("failover gap after crash, TTL %d s: %d/%d within TTL + %s; min %.2f s, median %.2f s, max %.2f s\n",
		ttl, within, runs, scenario.FailoverSlack, gaps[0].Seconds(), gaps[len(gaps)/2].Seconds(), gaps[len(gaps)-1].Seconds())
	return within >= runs*19/20, nil
}

// everyScenario runs each scenario headless once: it must show its
// effect within 15 s, and its history, written out, read back and
// replayed without etcd, must give the same verdict.
func everyScenario(ctx context.Context, env experiment.Env) bool {
	ok := true
	fmt.Println("every scenario headless, then replayed from its recorded history:")
	for _, sc := range scenario.Scenarios() {
		start := time.Now()
		run, err := scenario.Start(ctx, sc.Name, history.Params{}, env, nil)
		if err != nil {
			fmt.Printf("  %-30s MISSED: %v\n", sc.Name, err)
			ok = false
			continue
		}
		v, err := run.Wait()
		took := time.Since(start)
		same, why := replaysTo(run.History(), v)
		switch {
		case err != nil:
			why = err.Error()
		case !v.Showed:
			why = v.Sentence()
		case took > 15*time.Second:
			why = "took over 15 s"
		}
		mark := "ok"
		if err != nil || !v.Showed || took > 15*time.Second || !same {
			mark, ok = "MISSED: "+why, false
		}
		fmt.Printf("  %-30s %5.1f s  showed=%v  replay=%v  %s\n", sc.Name, took.Seconds(), v.Showed, same, mark)
	}
	return ok
}

// replaysTo writes h to JSON, reads it back and replays it: the verdict
// must be v again.
func replaysTo(h history.History, v history.Verdict) (bool, string) {
	var b bytes.Buffer
	if err := history.Write(&b, h); err != nil {
		return false, err.Error()
	}
	back, err := scenario.ReadHistory(&b)
	if err != nil {
		return false, err.Error()
	}
	r := scenario.Replay(&back)
	if r.Showed != v.Showed || r.Sentence() != v.Sentence() {
		return false, fmt.Sprintf("replayed %q", r.Sentence())
	}
	return true, ""
}

func reportLatency(lat []time.Duration) bool {
	med, p99 := quantiles(lat)
	fmt.Printf("event to screen (the experiment screen's drawn 80x24 view): %d events, median %s, p99 %s (bar %s)\n",
		len(lat), med.Round(time.Microsecond), p99.Round(time.Microsecond), latencyBar)
	return med <= latencyBar && p99 <= latencyBar
}

// quantiles is the median and the 99th percentile of lat.
func quantiles(lat []time.Duration) (med, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100]
}

// stepEveryScenario steps every scenario at once, each taking pause at
// every step, as a learner reading the screen would; each must still
// show its effect. Those on the in-process cluster run one after another.
func stepEveryScenario(ctx context.Context, env experiment.Env, pause time.Duration) bool {
	fmt.Printf("step mode, %s at each step:\n", pause)
	var mu sync.Mutex
	ok := true
	report := func(name string, steps int, v history.Verdict, err error) {
		mu.Lock()
		defer mu.Unlock()
		mark := "ok"
		if err != nil || !v.Showed {
			mark, ok = fmt.Sprintf("MISSED: %v %s", err, v.Sentence()), false
		}
		fmt.Printf("  %-30s %2d steps  showed=%v  %s\n", name, steps, v.Showed, mark)
	}
	var wg sync.WaitGroup
	var cluster []string
	for _, sc := range scenario.Scenarios() {
		if sc.NeedsCluster {
			cluster = append(cluster, sc.Name)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			steps, v, err := stepThrough(ctx, sc.Name, env, pause)
			report(sc.Name, steps, v, err)
		}()
	}
	for _, name := range cluster {
		steps, v, err := stepThrough(ctx, name, env, pause)
		report(name, steps, v, err)
	}
	wg.Wait()
	return ok
}

// stepThrough runs a scenario in step mode and takes each step after
// pause, as a learner reading the screen would.
func stepThrough(ctx context.Context, name string, env experiment.Env, pause time.Duration) (int, history.Verdict, error) {
	run, err := scenario.Start(ctx, name, history.Params{Step: true}, env, nil)
	if err != nil {
		return 0, history.Verdict{}, err
	}
	steps := 0
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-run.Done():
			v, err := run.Wait()
			return steps, v, err
		case <-tick.C:
		}
		if run.AtStep() {
			time.Sleep(pause)
			steps++
			run.Step()
		}
	}
}
