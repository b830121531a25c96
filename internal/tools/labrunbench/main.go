// Command labrunbench measures how soon a lab run has every replica
// running the lab's code, once the lab's replica program is built: from
// the start (the build check, which relinks nothing when nothing changed,
// included) to the last replica's process saying it runs the lab's code,
// over several runs of the reference on a calm schedule, stopped as soon
// as they are all up; for each lab named (by default 07, the election
// loop, and 05, the lock).
//
//	go run ./internal/tools/labrunbench [-runs 5] [-replicas 3] [-labs 07,05]
//
// It exits 1 if the slowest run of a lab misses the 3 s target.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/labrun"
)

const target = 3 * time.Second

func main() {
	runs := flag.Int("runs", 5, "runs to time")
	replicas := flag.Int("replicas", 3, "replicas per run")
	ids := flag.String("labs", "07,05", "the labs to time, comma separated")
	flag.Parse()
	failed := false
	for _, id := range strings.Split(*ids, ",") {
		if err := bench(id, *runs, *replicas); err != nil {
			fmt.Fprintln(os.Stderr, "labrunbench:", err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func bench(id string, runs, replicas int) error {
	wd, _ := os.Getwd()
	root := grade.FindRoot(wd)
	if root == "" {
		return fmt.Errorf("not inside the course's checkout")
	}
	l, ok := labrun.Find(id)
	if !ok {
		return fmt.Errorf("lab %s has no runner (%s)", id, strings.Join(labrun.IDs(), ", "))
	}
	ctx := context.Background()
	t0 := time.Now()
	if _, err := labrun.Build(ctx, root, l, true); err != nil {
		return err
	}
	fmt.Printf("first build of lab %s's replica program (reference): %.1f s\n", l.ID, time.Since(t0).Seconds())
	var took []time.Duration
	for range runs {
		d, err := timeOne(ctx, root, l, replicas)
		if err != nil {
			return err
		}
		took = append(took, d)
	}
	slices.Sort(took)
	worst := took[len(took)-1]
	fmt.Printf("lab %s: start to all %d replicas running (binary cached), %d runs: median %.2f s, slowest %.2f s (target < %s)\n",
		l.ID, replicas, runs, took[len(took)/2].Seconds(), worst.Seconds(), target)
	if worst >= target {
		return fmt.Errorf("lab %s: slowest start %.2f s misses %s", l.ID, worst.Seconds(), target)
	}
	return nil
}

// timeOne builds (a no-op when cached), starts a run and waits for the
// figure that says every replica runs, then stops the run.
func timeOne(ctx context.Context, root string, l labrun.Lab, replicas int) (time.Duration, error) {
	start := time.Now()
	bin, err := labrun.Build(ctx, root, l, true)
	if err != nil {
		return 0, err
	}
	up := make(chan time.Time, 1)
	run, err := experiment.StartLab(ctx, labrun.Spec(l, bin, true, "calm"), experiment.Params{Replicas: replicas}, experiment.Env{},
		func(e experiment.Event) {
			if e.Kind == experiment.Measured && e.Figure == "replicas_running_s" {
				up <- time.Now()
			}
		})
	if err != nil {
		return 0, err
	}
	defer func() { run.Stop(); run.Wait() }()
	select {
	case at := <-up:
		return at.Sub(start), nil
	case <-time.After(30 * time.Second):
		return 0, fmt.Errorf("the replicas were not all running after 30 s")
	}
}
