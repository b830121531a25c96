// Command labcheck is the labs' honesty checker. For every lab folder
// labs/NN_slug (or the labs named on the command line) it checks that
//
//	(a) every TestStep* grader test fails on the untouched stub;
//	(b) with the solution overlaid (go test -overlay), every step test
//	    passes under -race, -count times;
//	(c) every step test has a step with at least one hint in lab.yaml,
//	    and every step there names a step test;
//	(d) every planted wrong solution fails at least one step test: the
//	    mutants (solutions/<id>/testdata/mutants/*.patch) and the learner
//	    bugs (bugs/*.patch), each a small patch of the current solution
//	    (see patch.go for the format; a patch that no longer applies is
//	    reported as stale); every learner bug is graded BugRuns (5)
//	    times, and each run must fail a step (the first run finds the
//	    step that catches it, which then runs alone the 4 other times);
//	(e) every correct variant (solutions/<id>/testdata/variants/*.go, a
//	    whole solution file in another style) passes every step test
//	    under -race, -count times;
//	(f) every lab has a contract (labs/<id>/contract.yaml, see
//	    contract.go) that lists every promise its README and stub make,
//	    each with at least one test; every test it lists ran on the
//	    solution, and every step test is listed by a promise.
//
// It prints one row per lab and exits 1 on any violation, 2 on bad usage.
//
//	go run ./internal/tools/labcheck [-count N] [-race=false] [-p N] [-v] [LAB...]
//	go run ./internal/tools/labcheck -bench [LAB...]
//	go run ./internal/tools/labcheck -mutate [-p N] [-v] [LAB...]
//	go run ./internal/tools/labcheck -write-stubs
//	go run ./internal/tools/labcheck -runners [-runner-runs N] [-runners-all-bugs] [LAB...]
//
// -runners checks the lab runners (internal/labrun) instead, slowly (10
// to 20 s a lab run; make labrun-check and make bench run it): the
// reference holds under every prepared schedule in each of 5 runs, and at
// least 3 of the lab's learner bugs are shown failing by some schedule.
//
// The labs it checks are the labs as the course ships them, not as the
// learner left them: `make test` runs labcheck, and it must pass in a
// learner's checkout whatever they wrote in labs/, committed or not. The
// stubs come from labs/stubs.sum, which names each lab's stub by its git
// blob hash; labcheck reads them with `git cat-file blob`, so a learner's
// commits (which move HEAD) change nothing. The rest of labs/ comes from
// HEAD, and a .go file in a lab folder that is neither the stub nor a
// test is taken as the learner's and left out. When git's object is
// missing (a clone without the history), labcheck says so and falls back
// to HEAD's copy; without git at all, a stub that differs from
// labs/stubs.sum cannot be restored, and its untouched-stub check (a) is
// skipped with a note instead of failing on the learner's solution.
// Course authors who change a stub run -write-stubs; the package's tests
// fail when labs/stubs.sum does not match the stubs of the commit that
// last wrote it, or when a later commit changed a stub together with
// course files outside labs/ (a stub change the manifest missed).
//
// -bench measures instead: the wall time of grading each lab once its test
// binary is in the build cache (what a learner waits for after a save),
// and of verifying a pass (-race, several runs).
//
// -mutate measures how strong the graders are: it grades every automatic
// mutant of each solution (operator swapped, condition negated, statement
// deleted; see mutate.go), N at a time, and prints the share caught per
// lab and for labs 05-09 together (the bar is 90%). Mutants listed in a
// lab's solutions/NN/testdata/equivalent.txt (reviewed as behaving exactly
// like the solution) are reported apart and not scored.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/grade"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code := parseFlags(args, stderr)
	if f == nil {
		return code
	}
	if f.runners {
		if f.runnerRuns < 1 || f.runnerP < 1 {
			fmt.Fprintln(stderr, "labcheck: -runner-runs and -runner-p must be at least 1")
			return 2
		}
		return runRunners(ctx, f.root, f.labs, runnerOptions{Runs: f.runnerRuns, Parallel: f.runnerP, AllBugs: f.allBugs}, stdout, stderr)
	}
	if f.writeStubs {
		if err := writeStubsSum(f.root); err != nil {
			fmt.Fprintln(stderr, "labcheck: write", StubsSum+":", err)
			return 1
		}
		fmt.Fprintln(stdout, "labcheck: wrote", filepath.Join(f.root, filepath.FromSlash(StubsSum)))
		return 0
	}
	ids, code := selectLabs(f.root, f.labs, stderr)
	if ids == nil {
		return code
	}
	cfg := config{Root: f.root, Count: f.count, Race: f.race, Timeout: f.timeout}
	cleanup, code := prepare(ctx, &cfg, stderr)
	defer cleanup()
	if code != 0 {
		return code
	}
	if f.verbose {
		cfg.Log = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	if f.bench {
		return runBench(ctx, cfg, ids, f.benchRuns, stdout, stderr)
	}
	if f.mutate {
		return runMutate(ctx, cfg, ids, f.parallel, stdout, stderr)
	}
	start := time.Now()
	reports := checkLabs(ctx, cfg, ids, f.parallel)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "labcheck: interrupted")
		return 1
	}
	return printReports(stdout, reports, cfg, start)
}

// flags are labcheck's command line.
type flags struct {
	count, benchRuns, parallel   int
	race, bench, mutate, verbose bool
	writeStubs                   bool
	root                         string // absolute
	timeout                      time.Duration
	runners, allBugs             bool
	runnerRuns, runnerP          int
	labs                         []string // the labs named, none for all
}

// parseFlags reads the command line; nil and the exit code when it is
// wrong.
func parseFlags(args []string, stderr io.Writer) (*flags, int) {
	fs := flag.NewFlagSet("labcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{}
	fs.IntVar(&f.count, "count", 3, "run the solutions' tests `N` times")
	fs.BoolVar(&f.race, "race", true, "run solutions, variants and surviving mutants with the race detector")
	root := fs.String("root", ".", "module root `DIR`")
	fs.DurationVar(&f.timeout, "timeout", grade.DefaultTimeout, "go test -timeout for each run")
	fs.BoolVar(&f.bench, "bench", false, "measure grading time per lab instead of checking")
	fs.BoolVar(&f.mutate, "mutate", false, "grade automatic mutants of each solution and print the score per lab instead of checking (not part of make test)")
	fs.IntVar(&f.benchRuns, "bench-runs", 5, "with -bench: timed runs per lab (the median is printed)")
	fs.BoolVar(&f.verbose, "v", false, "print progress")
	fs.BoolVar(&f.writeStubs, "write-stubs", false, "record the stubs in labs/ as the pristine ones in "+StubsSum+" (for course authors, after changing a stub) and exit")
	fs.BoolVar(&f.runners, "runners", false, "check the lab runners instead (slow, not part of make test): the reference holds under every prepared schedule in every run, and at least 3 learner bugs are shown failing")
	fs.IntVar(&f.runnerRuns, "runner-runs", 5, "with -runners: runs of the reference per schedule")
	fs.IntVar(&f.runnerP, "runner-p", 2, "with -runners: lab runs at a time")
	fs.BoolVar(&f.allBugs, "runners-all-bugs", false, "with -runners: try every learner bug, not only until 3 are shown")
	fs.IntVar(&f.parallel, "p", 1, "check `N` labs at a time (make test uses 2: most of an etcd lab's time is its tests waiting on leases and watches, not CPU)")
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	if f.count < 1 || f.benchRuns < 1 || f.parallel < 1 {
		fmt.Fprintln(stderr, "labcheck: -count, -bench-runs and -p must be at least 1")
		return nil, 2
	}
	var err error
	if f.root, err = filepath.Abs(*root); err != nil {
		fmt.Fprintln(stderr, "labcheck:", err)
		return nil, 1
	}
	f.labs = fs.Args()
	return f, 0
}

// selectLabs is the labs to check: those named, else every lab under
// root; nil and the exit code when a name is not a lab or there is none.
func selectLabs(root string, named []string, stderr io.Writer) ([]string, int) {
	all, err := discover(root)
	if err != nil {
		fmt.Fprintln(stderr, "labcheck:", err)
		return nil, 1
	}
	for _, id := range named {
		if !slices.Contains(all, id) {
			fmt.Fprintf(stderr, "labcheck: no lab %q (have %v)\n", id, all)
			return nil, 2
		}
	}
	ids := named
	if len(ids) == 0 {
		ids = all
	}
	if len(ids) == 0 {
		fmt.Fprintln(stderr, "labcheck: no labs found under", filepath.Join(root, "labs"))
		return nil, 1
	}
	return ids, 0
}

// prepare gives cfg what every grading of the check shares: an etcd, a
// folder for this run's test binaries and the labs as shipped. The
// cleanup undoes what was set up, also when the exit code is not 0.
func prepare(ctx context.Context, cfg *config, stderr io.Writer) (cleanup func(), code int) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	// One etcd for every etcd lab's tests, as the TUI gives its own: the
	// graders then neither start a server per run nor link one.
	// The ticks of the terminal interface's etcd, which grades learners'
	// labs: the graders must hold on what learners run them against.
	srv, err := embedetcd.Start(ctx, embedetcd.WithTicks(embedetcd.IdleTicks))
	if err != nil {
		fmt.Fprintf(stderr, "labcheck: start etcd for the graders: %v (log: %s)\n", err, embedetcd.LogPath())
		return cleanup, 1
	}
	undo = append(undo, func() { srv.Close() })
	cfg.Env = []string{grade.EtcdEnv(srv.Endpoints())}
	// Test binaries of this run only: a TUI grading at the same time keeps
	// its own in the user cache.
	binDir, err := os.MkdirTemp("", "labcheck-bin-")
	if err != nil {
		fmt.Fprintln(stderr, "labcheck:", err)
		return cleanup, 1
	}
	undo = append(undo, func() { os.RemoveAll(binDir) })
	cfg.BinDir = binDir
	// Check the labs as committed, whatever a learner wrote in labs/.
	pristineDir, err := os.MkdirTemp("", "labcheck-labs-")
	if err != nil {
		fmt.Fprintln(stderr, "labcheck:", err)
		return cleanup, 1
	}
	undo = append(undo, func() { os.RemoveAll(pristineDir) })
	if cfg.Pristine, err = loadPristine(cfg.Root, pristineDir); err != nil {
		fmt.Fprintln(stderr, "labcheck: read the labs as shipped:", err)
		return cleanup, 1
	}
	if len(cfg.Pristine.Changed) > 0 {
		fmt.Fprintf(stderr, "labcheck: checking the labs as the course ships them (stubs from %s); %d file(s) in labs/ differ and are left out: %s\n", StubsSum, len(cfg.Pristine.Changed), strings.Join(cfg.Pristine.Changed, ", "))
	}
	for _, n := range cfg.Pristine.Notes {
		fmt.Fprintln(stderr, "labcheck:", n)
	}
	return cleanup, 0
}

// checkLabs checks ids, parallel at a time, and returns their reports in
// the order of ids.
func checkLabs(ctx context.Context, cfg config, ids []string, parallel int) []report {
	reports := make([]report, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, len(ids)) {
		wg.Go(func() {
			for i := range next {
				reports[i] = checkLab(ctx, cfg, ids[i])
			}
		})
	}
	// Later labs first: the course's later labs are its etcd labs, whose
	// tests wait longest on leases and watches, so with -p above 1 the
	// long ones start at once and the short ones fill in around them.
	for i := len(ids) - 1; i >= 0; i-- {
		next <- i
	}
	close(next)
	wg.Wait()
	return reports
}

// printReports prints the table and every problem, and returns the exit
// code: 1 when there is a problem.
func printReports(stdout io.Writer, reports []report, cfg config, start time.Time) int {
	writeTable(stdout, reports, cfg)
	bad := 0
	for _, r := range reports {
		for _, p := range r.Problems {
			fmt.Fprintf(stdout, "%s: %s\n", r.ID, p)
			bad++
		}
	}
	fmt.Fprintf(stdout, "%d labs, %d problems, %.1fs\n", len(reports), bad, time.Since(start).Seconds())
	if bad > 0 {
		return 1
	}
	return 0
}

func writeTable(w io.Writer, reports []report, cfg config) {
	sol := fmt.Sprintf("solution x%d", cfg.Count)
	if cfg.Race {
		sol += " -race"
	}
	fmt.Fprintf(w, "%-16s %-11s %-19s %-15s %-12s %-14s %-6s %-9s %s\n", "lab", "stub fails", sol, "mutants caught", fmt.Sprintf("bugs x%d", BugRuns), "variants pass", "hints", "promises", "seconds")
	for _, r := range reports {
		hints := "ok"
		if !r.HintsOK {
			hints = "BAD"
		}
		promises := "-"
		if r.Promises >= 0 {
			promises = fmt.Sprint(r.Promises)
		}
		fmt.Fprintf(w, "%-16s %-11s %-19s %-15s %-12s %-14s %-6s %-9s %.1f\n", r.ID,
			stubColumn(r),
			fmt.Sprintf("%d/%d pass", r.SolutionPass, r.Steps),
			fmt.Sprintf("%d/%d", r.MutantsCaught, r.Mutants),
			fmt.Sprintf("%d/%d", r.BugsCaught, r.Bugs),
			fmt.Sprintf("%d/%d", r.VariantsPass, r.Variants),
			hints, promises, r.Elapsed.Seconds())
	}
}

func stubColumn(r report) string {
	if r.StubSkipped {
		return "skipped"
	}
	return fmt.Sprintf("%d/%d", r.StubFailing, r.Steps)
}
