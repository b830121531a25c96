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

// Budgets from the labs issues: grading one pure lab after the first
// compile takes under 1 s of wall time, one etcd lab under 3 s; verifying
// a pass (grade.Verify: grade.VerifyCount runs under -race) under 5 s and
// 10 s.
const (
	pureBudget       = time.Second
	etcdBudget       = 3 * time.Second
	pureVerifyBudget = 5 * time.Second
	etcdVerifyBudget = 10 * time.Second
)

// runBench times grading each lab's solution the way the TUI grades (go
// test -json -count=1 through internal/grade, no -race, kept test binary,
// the graders' etcd already running) in two cases, runs times each, and
// prints the medians:
//
//   - regrade: nothing changed since the last grading, so the kept test
//     binary is reused ("after the first compile" in the labs issue);
//   - after edit: the solution file changed before every run (a new
//     variable appended), so the lab package is recompiled and the test
//     binary relinked, as after a learner's save.
//
// The verdict compares the regrade median with the budget; the after-edit
// figure is printed next to it. It exits 1 when a lab is over budget.
func runBench(ctx context.Context, cfg config, ids []string, runs int, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "%-16s %-6s %-9s %-9s %-9s %-11s %-8s %-6s %-9s %-8s %-6s %s\n", "lab", "kind", "regrade", "max", "cpu", "after edit", "budget", "", "verify", "budget", "", "load")
	over := 0
	var total, totalEdit time.Duration
	editDir, err := os.MkdirTemp("", "labcheck-edit-")
	if err != nil {
		fmt.Fprintf(stderr, "labcheck: %v\n", err)
		return 1
	}
	defer os.RemoveAll(editDir)
	for _, id := range ids {
		b, err := benchLab(ctx, cfg, id, runs, editDir)
		if err != nil {
			fmt.Fprintf(stderr, "labcheck: %v\n", err)
			return 1
		}
		median, medianEdit, medianVerify := b.times[len(b.times)/2], b.edits[len(b.edits)/2], b.verifies[len(b.verifies)/2]
		total += median
		totalEdit += medianEdit
		kind, budget, vbudget := "pure", pureBudget, pureVerifyBudget
		if grade.UsesEtcd(filepath.Join(cfg.Root, "labs", id)) {
			kind, budget, vbudget = "etcd", etcdBudget, etcdVerifyBudget
		}
		verdict, vverdict := "ok", "ok"
		if median > budget {
			verdict = "OVER"
			over++
		}
		if medianVerify > vbudget {
			vverdict = "OVER"
			over++
		}
		fmt.Fprintf(stdout, "%-16s %-6s %-9s %-9s %-9s %-11s %-8s %-6s %-9s %-8s %-6s %s\n", id, kind, secs(median), secs(b.times[len(b.times)-1]), secs(b.cpus[len(b.cpus)/2]), secs(medianEdit), secs(budget), verdict, secs(medianVerify), secs(vbudget), vverdict, loadAverage())
	}
	fmt.Fprintf(stdout, "all %d labs' solutions, one after another: %s regrading, %s after an edit (wall times depend on how busy the machine is; cpu is the median processor time of one regrade; verify is %d runs under -race once the race build is compiled; load is the 1-minute load average as the lab's row was printed)\n", len(ids), secs(total), secs(totalEdit), grade.VerifyCount)
	if over > 0 {
		return 1
	}
	return 0
}

// labBench is one lab's timings, each sorted: regrades (wall and CPU),
// gradings after an edit, and verifications.
type labBench struct {
	times, cpus, edits, verifies []time.Duration
}

// benchLab times lab id's solution: runs regrades, runs gradings after an
// edit (the edited copy written in editDir) and up to 3 verifications.
func benchLab(ctx context.Context, cfg config, id string, runs int, editDir string) (labBench, error) {
	var b labBench
	data, err := os.ReadFile(filepath.Join(cfg.Root, "labs", id, "lab.yaml"))
	if err != nil {
		return b, fmt.Errorf("%s: %w", id, err)
	}
	lab, _ := lessons.ParseLab(id+"/lab.yaml", id, data, nil)
	o := cfg.options(id)
	o.Overlay = grade.SolutionOverlay(id, lab.File)
	if err := grade.Warm(ctx, o); err != nil {
		return b, err
	}
	if b.times, b.cpus, err = timeRuns(ctx, id, o, runs, nil); err != nil {
		return b, err
	}
	// The edited copy: the solution plus one more variable each run.
	solution, err := os.ReadFile(filepath.Join(cfg.Root, "solutions", id, lab.File))
	if err != nil {
		return b, err
	}
	edited := filepath.Join(editDir, id+"-"+lab.File)
	oe := o
	oe.Overlay = map[string]string{filepath.Join("labs", id, lab.File): edited}
	b.edits, _, err = timeRuns(ctx, id, oe, runs, func(i int) error {
		src := fmt.Sprintf("%s\nvar labcheckEdit%d = %d\n", solution, i, time.Now().UnixNano())
		return os.WriteFile(edited, []byte(src), 0o644)
	})
	if err != nil {
		return b, err
	}
	// Verification, as grade.Verify runs it after a pass: the race
	// build is compiled first (as the TUI's first verification does).
	ov := o
	ov.Race, ov.Count, ov.Timeout = true, grade.VerifyCount, 2*cfg.Timeout
	if err := grade.Warm(ctx, ov); err != nil {
		return b, err
	}
	if b.verifies, _, err = timeRuns(ctx, id, ov, min(runs, 3), nil); err != nil {
		return b, fmt.Errorf("verification: %w", err)
	}
	return b, nil
}

// timeRuns grades lab id with o runs times, calling before (when not
// nil) ahead of each, and returns the wall and CPU times, sorted; the
// solution failing is an error.
func timeRuns(ctx context.Context, id string, o grade.Options, runs int, before func(i int) error) (times, cpus []time.Duration, err error) {
	for i := range runs {
		if before != nil {
			if err := before(i); err != nil {
				return nil, nil, err
			}
		}
		start := time.Now()
		res, err := grade.Run(ctx, o)
		d := time.Since(start)
		if err != nil {
			return nil, nil, err
		}
		if !res.Passed {
			return nil, nil, fmt.Errorf("%s: the solution failed during the benchmark: %s", id, res.Message)
		}
		times = append(times, d)
		cpus = append(cpus, res.CPU)
	}
	slices.Sort(times)
	slices.Sort(cpus)
	return times, cpus, nil
}

// loadAverage is the machine's load average over the last minute, as the
// kernel reports it, or "-" where it cannot be read: the times above
// mean little without it.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "-"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "-"
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
