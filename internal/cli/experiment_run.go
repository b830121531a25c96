package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
)

// runFlags are the flags of `experiment run`.
type runFlags struct {
	name      string
	asJSON    bool
	verbose   bool
	record    string
	faults    string
	stepDelay time.Duration
	lab       labFlags // --lab: the learner's own code as the replicas (experiment_lab.go)
	params    history.Params
	set       map[string]bool // the flags given on the command line
}

func parseRunFlags(args []string) (runFlags, error) {
	var rf runFlags
	fs := flag.NewFlagSet("experiment run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&rf.asJSON, "json", false, "print one JSON event a line, then the verdict as JSON")
	fs.Uint64Var(&rf.params.Seed, "seed", 1, "seed for the run's random choices")
	fs.IntVar(&rf.params.Replicas, "replicas", 0, "number of replicas (0: the experiment's default)")
	fs.Int64Var(&rf.params.TTL, "ttl", 0, "lease TTL in seconds (0: the experiment's default)")
	fs.DurationVar(&rf.stepDelay, "step-delay", 0, "wait this long at every step")
	fs.StringVar(&rf.record, "record", "", "save the run's history to this file")
	fs.StringVar(&rf.faults, "faults", "", "inject the learner faults recorded in this history file")
	fs.BoolVar(&rf.verbose, "v", false, "also print every lease renewal and key change (text mode)")
	rf.lab.define(fs)
	name, rest, err := parseWithName(fs, args)
	if err != nil {
		return rf, err
	}
	if rf.lab.id != "" || rf.lab.used(fs) {
		return rf.lab.check(rf, name, rest, fs)
	}
	if name == "" {
		return rf, Usagef("run needs an experiment NAME (see: playground experiment list)")
	}
	if len(rest) > 0 {
		return rf, Usagef("unexpected argument %q", rest[0])
	}
	if rf.stepDelay < 0 {
		return rf, Usagef("--step-delay %s: a delay cannot be negative", rf.stepDelay)
	}
	// A scenario's old name (before it was renamed) runs it too, and the
	// run goes by its current name from here on.
	rf.name, rf.set = history.CurrentName(name), map[string]bool{}
	fs.Visit(func(f *flag.Flag) { rf.set[f.Name] = true })
	return rf, nil
}

// parseWithName parses a command's flags (parseFlags: before, between or
// after the arguments) and returns its first argument, the name, and
// whatever else is left.
func parseWithName(fs *flag.FlagSet, args []string) (string, []string, error) {
	rest, err := parseFlags(fs, args)
	if err != nil || len(rest) == 0 {
		return "", rest, err
	}
	return rest[0], rest[1:], nil
}

// checkRanges refuses replica counts and TTLs the scenario does not take.
func checkRanges(sc *experiment.Scenario, p history.Params) error {
	if lo, hi := sc.ReplicaRange(); p.Replicas != 0 && (p.Replicas < lo || p.Replicas > hi) {
		if lo == hi {
			return Usagef("--replicas %d: %s runs exactly %d replica(s)", p.Replicas, sc.Name, lo)
		}
		return Usagef("--replicas %d: %s runs %d to %d replicas", p.Replicas, sc.Name, lo, hi)
	}
	if lo, hi := sc.TTLRange(); p.TTL != 0 && (p.TTL < lo || p.TTL > hi) {
		return Usagef("--ttl %d: %s takes a lease TTL of %d to %d seconds", p.TTL, sc.Name, lo, hi)
	}
	return nil
}

// withSchedule takes the fault schedule of the --faults file and, for
// what the command line left unsaid, the recorded run's parameters.
func (rf *runFlags) withSchedule() error {
	h, err := rf.replayed()
	if h == nil || err != nil {
		return err
	}
	p := &rf.params
	p.Fencing, p.VersionedUnlock = h.Params.Fencing, h.Params.VersionedUnlock
	p.Faults = h.FaultSchedule()
	return nil
}

// replayed reads the history --faults names (nil without the flag),
// checks that it is a run of this experiment, and takes its seed,
// replica count and TTL where the command line did not set them.
func (rf *runFlags) replayed() (*history.History, error) {
	if rf.faults == "" {
		return nil, nil
	}
	h, err := readHistoryFile(rf.faults)
	if err != nil {
		return nil, err
	}
	if h.Scenario != rf.name {
		return nil, Usagef("--faults %s: that is a run of %s, not of %s", rf.faults, h.Scenario, rf.name)
	}
	p := &rf.params
	if !rf.set["seed"] {
		p.Seed = h.Params.Seed
	}
	if !rf.set["replicas"] {
		p.Replicas = h.Params.Replicas
	}
	if !rf.set["ttl"] {
		p.TTL = h.Timing.AskedTTL
	}
	p.Watch = h.Params.Watch // a shrunk lab run's earliest end
	return &h, nil
}

func readHistoryFile(path string) (history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return history.History{}, Usagef("%v", err)
	}
	defer f.Close()
	h, err := experiment.ReadHistory(f, runScenario)
	if err != nil {
		return history.History{}, Usagef("%s: %v", path, err)
	}
	return h, nil
}

func runOneExperiment(ctx context.Context, env *Env, args []string) error {
	rf, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	if rf.lab.id != "" {
		return runLab(ctx, env, rf)
	}
	sc := scenario.Lookup(rf.name)
	if sc == nil {
		return Usagef("no experiment named %q (see: playground experiment list)", rf.name)
	}
	if err := rf.withSchedule(); err != nil {
		return err
	}
	if err := checkRanges(sc, rf.params); err != nil {
		return err
	}
	xenv, done, err := experimentEnv(ctx, env, sc)
	if err != nil {
		return err
	}
	defer done()
	rf.params.StepDelay = rf.stepDelay
	start := time.Now()
	run, err := scenario.Start(ctx, rf.name, rf.params, xenv, eventPrinter(env.Stdout, rf.asJSON, rf.verbose))
	if errors.Is(err, experiment.ErrNeedsCluster) || errors.Is(err, experiment.ErrNeedsInProcess) {
		fmt.Fprintf(env.Stderr, "%s: %v\n", rf.name, err)
		return &ExitError{Code: exitNeedsInProcess}
	}
	if err != nil {
		return fmt.Errorf("experiment %s: %w", rf.name, err)
	}
	v, err := run.Wait()
	recorded := recordRun(env, rf.record, run.History())
	return unlessUnsaved(reportVerdict(ctx, env.Stdout, rf.name, rf.asJSON, v, err, time.Since(start)), recorded)
}

// experimentEnv is where the run goes: the in-process etcd, or the
// shared cluster under the learner's prefix. done closes what it opened.
func experimentEnv(ctx context.Context, env *Env, sc *experiment.Scenario) (experiment.Env, func(), error) {
	if !env.Etcd.Remote() {
		return experiment.Env{}, func() {}, nil
	}
	if sc.SharedCluster(env.Etcd) != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\nRun it without --etcd-endpoints: it starts its own in-process etcd.\n", sc.Name, needsWhy(sc))
		return experiment.Env{}, nil, &ExitError{Code: exitNeedsInProcess}
	}
	r, err := embedetcd.Connect(ctx, env.Etcd, embedetcd.LearnerPrefix(env.Etcd))
	if err != nil {
		return experiment.Env{}, nil, fmt.Errorf("connect to the shared cluster: %w", err)
	}
	return experiment.Env{Etcd: r}, func() { r.Close() }, nil
}

// eventPrinter prints each event as it happens: a JSON line, or a line
// of text leaving out renewals and key changes unless verbose.
func eventPrinter(out io.Writer, asJSON, verbose bool) func(history.Event) {
	return func(e history.Event) {
		switch {
		case e.Kind == history.Finished:
			// printed with the whole verdict
		case asJSON:
			b, _ := json.Marshal(e)
			fmt.Fprintln(out, string(b))
		case (e.Kind == history.LeaseRenewed || e.Kind == history.KeyChanged) && !verbose:
		default:
			fmt.Fprintln(out, e.String())
		}
	}
}

// reportVerdict prints the verdict and turns it into the exit status.
func reportVerdict(ctx context.Context, out io.Writer, name string, asJSON bool, v history.Verdict, err error, took time.Duration) error {
	if ctx.Err() != nil {
		// Stopped by Ctrl-C or SIGTERM: whatever the script concluded
		// from a run cut short is not a verdict.
		if asJSON {
			b, _ := json.Marshal(struct {
				Kind     string  `json:"kind"`
				Scenario string  `json:"scenario"`
				Seconds  float64 `json:"seconds"`
			}{"interrupted", name, took.Seconds()})
			fmt.Fprintln(out, string(b))
		} else {
			fmt.Fprintf(out, "interrupted after %.1f s: no verdict\n", took.Seconds())
		}
		return ctx.Err()
	}
	printExperimentVerdict(out, asJSON, v, err, took)
	if err != nil {
		return fmt.Errorf("experiment %s: %w", name, err)
	}
	if !v.Showed {
		return &ExitError{Code: 1}
	}
	return nil
}

func printExperimentVerdict(out io.Writer, asJSON bool, v history.Verdict, err error, took time.Duration) {
	if asJSON {
		fmt.Fprintln(out, verdictLine(v, err, took, ""))
		return
	}
	mark := "SHOWN"
	if !v.Showed {
		mark = "NOT SHOWN"
	}
	_, body := v.Told()
	fmt.Fprintf(out, "verdict: %s: %s (%.1f s)\n", mark, body, took.Seconds())
}

// verdictLine is the verdict as the last line of --json: a
// history.Report, the verdict as its JSON writes it (its outcome, its
// sentence as "summary", its findings), the findings that did not hold
// apart as "violations" (each with its property, instant in seconds,
// replicas, events and sentence), the file that replays its faults, the
// run's length, its error and the exit code.
func verdictLine(v history.Verdict, err error, took time.Duration, faultsFile string) string {
	r := history.NewReport(v, err, took)
	r.FaultsFile = faultsFile
	b, _ := json.Marshal(r)
	return string(b)
}

// recordRun saves the run's history when --record asked for it, and
// says on stderr when it could not: false then.
func recordRun(env *Env, path string, h history.History) bool {
	if path == "" {
		return true
	}
	if err := saveHistory(path, h); err != nil {
		fmt.Fprintf(env.Stderr, "playground experiment: the run's history was not saved: %v\n", err)
		return false
	}
	return true
}

// unlessUnsaved fails (exit 1) a run that ended well but whose --record
// file was not saved: a script must not look for a file that is not
// there.
func unlessUnsaved(err error, recorded bool) error {
	if err == nil && !recorded {
		return &ExitError{Code: 1}
	}
	return err
}

// saveHistory writes h to path through a temporary file, so a reader
// never finds half a history.
func saveHistory(path string, h history.History) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history-*")
	if err != nil {
		return fmt.Errorf("record %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := history.Write(tmp, h); err != nil {
		tmp.Close()
		return fmt.Errorf("record %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("record %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("record %s: %w", path, err)
	}
	return nil
}
