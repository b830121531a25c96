package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

// labcheck -runners: the lab runners are honest about what they show.
// For each lab with a runner, the reference must hold under every
// prepared schedule in every one of -runner-runs runs, and at least
// runnerBugsNeeded of the lab's planted learner bugs (bugs/*.patch) must
// be shown failing by at least one schedule, so that the runner is known
// to be able to show a failure. A lab run lasts 10 to 20 s: this is a
// mode of its own (make labrun-check, make bench), not part of make test.

// runnerBugsNeeded is how many learner bugs a runner must show failing.
const runnerBugsNeeded = 3

// bugSchedules is the order the schedules are tried on a bug: the calm
// run first (a shutdown shows most), the slow ones last; by-hand is not
// one of them: it waits for a learner to end it.
var bugSchedules = []string{"calm", "crash-owner", "cut-off-owner", "pause-owner", "cut-off-waiter", "pause-waiter", "crash-during-stepdown", "flapping-network", "etcd-leader-change"}

// runnerOptions tune labcheck -runners.
type runnerOptions struct {
	Runs     int  // runs of the reference per schedule
	Parallel int  // lab runs at a time
	AllBugs  bool // try every bug, not only until enough are shown
}

// runRunners checks the runners of the labs in ids (all labs with one
// when ids is empty) and prints a report; 0 when every check held.
func runRunners(ctx context.Context, root string, ids []string, o runnerOptions, stdout, stderr io.Writer) int {
	labs, code := runnerLabs(ids, stderr)
	if code != 0 {
		return code
	}
	// The replica programs built here (one per bug) stay out of the
	// user's cache.
	cache, err := os.MkdirTemp("", "labcheck-runners-")
	if err != nil {
		fmt.Fprintln(stderr, "labcheck:", err)
		return 1
	}
	defer os.RemoveAll(cache)
	os.Setenv(grade.CacheDirEnv, cache)
	start := time.Now()
	failed := false
	for _, l := range labs {
		if !checkRunner(ctx, root, cache, l, o, stdout) {
			failed = true
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "labcheck: interrupted")
			return 1
		}
	}
	fmt.Fprintf(stdout, "runners: %d lab(s) in %.0f s\n", len(labs), time.Since(start).Seconds())
	if failed {
		return 1
	}
	return 0
}

// runnerLabs resolves the lab ids asked for to labs with a runner.
func runnerLabs(ids []string, stderr io.Writer) ([]labrun.Lab, int) {
	if len(ids) == 0 {
		ids = labrun.IDs()
	}
	var out []labrun.Lab
	for _, id := range ids {
		l, ok := labrun.Find(id)
		if !ok {
			fmt.Fprintf(stderr, "labcheck: lab %s has no runner (labs with one: %s)\n", id, strings.Join(labrun.IDs(), ", "))
			return nil, 2
		}
		out = append(out, l)
	}
	return out, 0
}

// checkRunner runs both checks on one lab and prints what they found.
func checkRunner(ctx context.Context, root, tmp string, l labrun.Lab, o runnerOptions, w io.Writer) bool {
	fmt.Fprintf(w, "lab %s\n", l.ID)
	bin, err := labrun.Build(ctx, root, l, true)
	if err != nil {
		fmt.Fprintf(w, "  FAIL the reference does not build: %v\n", err)
		return false
	}
	held, ref := referenceHolds(ctx, l, bin, o, w)
	shown := bugsShown(ctx, root, tmp, l, o, ref, w)
	ok := held && shown >= runnerBugsNeeded
	mark := "ok"
	if shown < runnerBugsNeeded {
		mark = "FAIL"
	}
	fmt.Fprintf(w, "  %s %d learner bug(s) shown failing, %d needed\n", mark, shown, runnerBugsNeeded)
	return ok
}

// labJob is one lab run to make.
type labJob struct {
	bin, schedule string
	reference     bool
	seed          uint64
}

// labResult is a run's verdict, or why the run itself failed (then the
// verdict says nothing about the code).
type labResult struct {
	history.Verdict
	err error
}

// runJobs makes the runs, parallel at a time, and returns their results
// in order.
func runJobs(ctx context.Context, l labrun.Lab, jobs []labJob, parallel int) []labResult {
	out := make([]labResult, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(parallel, len(jobs))) {
		wg.Go(func() {
			for i := range next {
				out[i] = runOnce(ctx, l, jobs[i])
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func runOnce(ctx context.Context, l labrun.Lab, j labJob) labResult {
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	run, err := labrun.Start(rctx, l.Spec(j.bin, j.reference, j.schedule), history.Params{Seed: j.seed}, experiment.Env{}, nil)
	if err != nil {
		return labResult{history.Verdict{Summary: "the run did not start: " + err.Error()}, err}
	}
	v, err := run.Wait()
	return labResult{v, err}
}

// refFindings are the findings the reference itself had, by schedule
// ("flapping-network" -> "two-owners"): a bug shown by one of them
// under that schedule is not shown by its own doing.
type refFindings map[string]map[string]bool

// finding is the name a verdict's first violation at an instant goes by
// ("two-owners"), or "".
func finding(v history.Verdict) string {
	if f, ok := v.TimedViolation(); ok {
		return f.Violation
	}
	return ""
}

// referenceHolds runs the reference o.Runs times under every schedule,
// and returns the findings of the runs that did not hold.
func referenceHolds(ctx context.Context, l labrun.Lab, bin string, o runnerOptions, w io.Writer) (bool, refFindings) {
	var schedules []string
	for _, s := range labrun.ScheduleNames() {
		// by-hand injects nothing and waits up to 5 minutes for a learner
		// to end the run: it would only be a slow calm run here.
		if !labrun.EndsByHand(s) {
			schedules = append(schedules, s)
		}
	}
	var jobs []labJob
	for _, s := range schedules {
		for i := range o.Runs {
			jobs = append(jobs, labJob{bin: bin, schedule: s, reference: true, seed: uint64(i + 1)})
		}
	}
	vs := runJobs(ctx, l, jobs, o.Parallel)
	ok, ref := true, refFindings{}
	for si, s := range schedules {
		n, first := 0, ""
		for i := range o.Runs {
			v := vs[si*o.Runs+i]
			if v.err == nil && v.Showed {
				n++
				continue
			}
			if f := finding(v.Verdict); v.err == nil && f != "" {
				if ref[s] == nil {
					ref[s] = map[string]bool{}
				}
				ref[s][f] = true
			}
			if first == "" {
				first = fmt.Sprintf(" (seed %d: %s)", i+1, shorten(v.Verdict))
			}
		}
		mark := "ok"
		if n < o.Runs {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(w, "  %s reference held under %-22s %d of %d%s\n", mark, s, n, o.Runs, first)
	}
	return ok, ref
}

// bugsShown tries each learner bug on the schedules in bugSchedules
// order until one shows it failing, and counts the bugs shown; without
// o.AllBugs it stops once runnerBugsNeeded are.
func bugsShown(ctx context.Context, root, tmp string, l labrun.Lab, o runnerOptions, ref refFindings, w io.Writer) int {
	sol, err := os.ReadFile(filepath.Join(root, "solutions", l.ID, l.File))
	if err != nil {
		fmt.Fprintf(w, "  FAIL read the reference: %v\n", err)
		return 0
	}
	bugs, probs := loadPatches(root, l.ID, "bugs", "bug", string(sol), filepath.Join(tmp, l.ID))
	for _, p := range probs {
		fmt.Fprintf(w, "  FAIL %s\n", p)
	}
	shown := 0
	for _, b := range bugs {
		if shown >= runnerBugsNeeded && !o.AllBugs {
			fmt.Fprintf(w, "  (the other %d bug(s) not tried: -runners-all-bugs tries them)\n", len(bugs)-shownOrTried(bugs, b))
			break
		}
		bin, err := labrun.BuildWith(ctx, root, l, b.Path)
		if err != nil {
			fmt.Fprintf(w, "  bug %-28s does not build: %v\n", b.Name, err)
			continue
		}
		by, summary := firstShowing(ctx, l, bin, o.Parallel, ref)
		if by == "" {
			fmt.Fprintf(w, "  bug %-28s held under every schedule\n", b.Name)
			continue
		}
		shown++
		fmt.Fprintf(w, "  bug %-28s shown by %s: %s\n", b.Name, by, summary)
	}
	return shown
}

func shownOrTried(bugs []wrongSolution, at wrongSolution) int {
	for i, b := range bugs {
		if b.Name == at.Name {
			return i
		}
	}
	return len(bugs)
}

// firstShowing runs bin under the schedules, parallel at a time in
// bugSchedules order, and returns the first that found a violation the
// reference never had under that schedule.
func firstShowing(ctx context.Context, l labrun.Lab, bin string, parallel int, ref refFindings) (string, string) {
	for i := 0; i < len(bugSchedules); i += parallel {
		batch := bugSchedules[i:min(i+parallel, len(bugSchedules))]
		jobs := make([]labJob, len(batch))
		for k, s := range batch {
			jobs[k] = labJob{bin: bin, schedule: s, seed: 1}
		}
		for k, v := range runJobs(ctx, l, jobs, parallel) {
			if v.err == nil && !v.Showed && !ref[batch[k]][finding(v.Verdict)] {
				return batch[k], shorten(v.Verdict)
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return "", ""
}

// shorten is the sentence of a verdict's first violation at an instant
// (else the verdict's), cut to a line or so.
func shorten(v history.Verdict) string {
	s := v.Sentence()
	if f, ok := v.TimedViolation(); ok {
		s = f.Sentence()
	}
	if len(s) > 220 {
		s = s[:217] + "..."
	}
	return s
}
