package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

// Budgets from the labs issue: grading one pure lab after the first
// compile takes under 1 s of wall time, one etcd lab under 3 s.
const (
	pureBudget = time.Second
	etcdBudget = 3 * time.Second
)

// runBench warms each lab's test binary (the solution's), then times
// grading the solution runs times (go test -json -count=1, no -race, as the
// TUI grades) and prints the median. It exits 1 when a median is over its
// budget.
func runBench(ctx context.Context, cfg config, ids []string, runs int, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "%-16s %-6s %-9s %-9s %-9s %-8s %s\n", "lab", "kind", "median", "max", "cpu", "budget", "")
	over := 0
	var total time.Duration
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(cfg.Root, "labs", id, "lab.yaml"))
		if err != nil {
			fmt.Fprintf(stderr, "labcheck: %s: %v\n", id, err)
			return 1
		}
		lab, _ := lessons.ParseLab(id+"/lab.yaml", id, data, nil)
		o := grade.Options{Dir: cfg.Root, Lab: id, Timeout: cfg.Timeout,
			Overlay: grade.SolutionOverlay(id, lab.File)}
		if err := grade.Warm(ctx, o); err != nil {
			fmt.Fprintf(stderr, "labcheck: %v\n", err)
			return 1
		}
		var times, cpus []time.Duration
		for range runs {
			start := time.Now()
			res, err := grade.Run(ctx, o)
			d := time.Since(start)
			if err != nil {
				fmt.Fprintf(stderr, "labcheck: %v\n", err)
				return 1
			}
			if !res.Passed {
				fmt.Fprintf(stderr, "labcheck: %s: the solution failed during the benchmark: %s\n", id, res.Message)
				return 1
			}
			times = append(times, d)
			cpus = append(cpus, res.CPU)
		}
		slices.Sort(times)
		slices.Sort(cpus)
		median := times[len(times)/2]
		total += median
		kind, budget := "pure", pureBudget
		if usesEtcd(filepath.Join(cfg.Root, "labs", id)) {
			kind, budget = "etcd", etcdBudget
		}
		verdict := "ok"
		if median > budget {
			verdict = "OVER BUDGET"
			over++
		}
		fmt.Fprintf(stdout, "%-16s %-6s %-9s %-9s %-9s %-8s %s\n", id, kind, secs(median), secs(times[len(times)-1]), secs(cpus[len(cpus)/2]), secs(budget), verdict)
	}
	fmt.Fprintf(stdout, "all %d labs' solutions, one after another: %s (wall times depend on how busy the machine is; cpu is the median processor time of one run)\n", len(ids), secs(total))
	if over > 0 {
		return 1
	}
	return 0
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// usesEtcd reports whether a lab imports etcd, embedetcd or the etcd harness (its graders start
// an embedded etcd), which gives it the larger budget.
func usesEtcd(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil && (strings.Contains(string(data), "go.etcd.io/") || strings.Contains(string(data), "embedetcd") || strings.Contains(string(data), "etcdharness")) {
			return true
		}
	}
	return false
}
