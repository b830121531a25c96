// Command expbench measures how faithfully the experiments reproduce
// etcd's behaviour: the failover gap after a crash against the TTL, the
// single winner of the CAS race, the fate of a zombie's stale write with
// fencing on and off, and how long each scenario takes headless.
//
//	go run ./internal/tools/expbench [-runs 20] [-ttl 1] [-step-learner 1.5s]
//
// It exits 1 if a figure misses its target.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
)

func main() {
	runs := flag.Int("runs", 20, "runs per figure")
	ttl := flag.Int64("ttl", 1, "lease TTL in seconds for the failover figure")
	skipDurations := flag.Bool("skip-durations", false, "do not time every scenario")
	learner := flag.Duration("step-learner", 0, "also run every scenario in step mode (a first run's mode), taking this long at each step as a reading learner would (e.g. 1.5s)")
	flag.Parse()
	if err := bench(*runs, *ttl, !*skipDurations, *learner); err != nil {
		fmt.Fprintln(os.Stderr, "expbench:", err)
		os.Exit(1)
	}
}

func bench(runs int, ttl int64, durations bool, learner time.Duration) error {
	ctx := context.Background()
	logOpt := embedetcd.WithLogFile(filepath.Join(os.TempDir(), "playground-expbench-etcd.log"))
	srv, err := embedetcd.Start(ctx, logOpt)
	if err != nil {
		return err
	}
	defer srv.Close()
	env := experiment.Env{Etcd: srv}
	failed := false

	// Failover gap after a crash.
	limit := time.Duration(ttl)*time.Second + experiment.FailoverSlack
	var gaps []time.Duration
	within := 0
	for range runs {
		g, err := experiment.FailoverGap(ctx, env, 3, ttl)
		if err != nil {
			return fmt.Errorf("failover: %w", err)
		}
		gaps = append(gaps, g)
		if g <= limit {
			within++
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	fmt.Printf("failover gap after crash, TTL %d s: %d/%d within TTL + %s; min %.2f s, median %.2f s, max %.2f s\n",
		ttl, within, runs, experiment.FailoverSlack, gaps[0].Seconds(), gaps[len(gaps)/2].Seconds(), gaps[len(gaps)-1].Seconds())
	failed = failed || within < runs*19/20

	// CAS race: 100 rounds, exactly one winner each.
	v, err := experiment.Execute(ctx, "cas-race", experiment.Params{Replicas: 20}, env, nil)
	if err != nil {
		return fmt.Errorf("cas-race: %w", err)
	}
	fmt.Printf("cas-race, 20 replicas: exactly one winner in %.0f/%.0f rounds (%.0f distinct winners)\n",
		v.Figures["exactly_one_winner"], v.Figures["rounds"], v.Figures["distinct_winners"])
	failed = failed || v.Figures["exactly_one_winner"] != v.Figures["rounds"]

	// Fencing: the zombie's stale write, both variants per run.
	on, off := 0, 0
	for range runs {
		v, err := experiment.Execute(ctx, "fencing", experiment.Params{}, env, nil)
		if err != nil {
			return fmt.Errorf("fencing: %w", err)
		}
		on += int(v.Figures["stale_rejected_fencing_on"])
		off += int(v.Figures["stale_accepted_fencing_off"])
	}
	fmt.Printf("fencing: stale write rejected %d/%d with fencing on, accepted %d/%d with fencing off\n", on, runs, off, runs)
	failed = failed || on != runs || off != runs

	if durations {
		for _, sc := range experiment.Scenarios() {
			start := time.Now()
			v, err := experiment.Execute(ctx, sc.Name, experiment.Params{}, env, nil)
			took := time.Since(start)
			mark := "ok"
			if err != nil || !v.Showed || took > 15*time.Second {
				mark = "MISSED"
				failed = true
			}
			fmt.Printf("  %-30s %5.1f s  showed=%v  %s\n", sc.Name, took.Seconds(), v.Showed, mark)
		}
	}
	if learner > 0 {
		fmt.Printf("step mode, %s at each step:\n", learner)
		for _, sc := range experiment.Scenarios() {
			steps, v, err := stepThrough(ctx, sc.Name, env, learner)
			mark := "ok"
			if err != nil || !v.Showed {
				mark = "MISSED"
				failed = true
			}
			fmt.Printf("  %-30s %2d steps  showed=%v  %s\n", sc.Name, steps, v.Showed, mark)
		}
	}
	if failed {
		return fmt.Errorf("a figure missed its target")
	}
	return nil
}

// stepThrough runs a scenario in step mode and takes each step after
// pause, as a learner reading the screen would: a scenario whose effect
// depends on a running clock must not wait while it runs.
func stepThrough(ctx context.Context, name string, env experiment.Env, pause time.Duration) (int, experiment.Verdict, error) {
	run, err := experiment.Start(ctx, name, experiment.Params{Step: true}, env, nil)
	if err != nil {
		return 0, experiment.Verdict{}, err
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
