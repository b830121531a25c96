package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/lessons"
)

// labFlags are the flags of `experiment run --lab LAB`: the learner's own
// lab code as the replicas.
type labFlags struct {
	id        string
	schedule  string
	reference bool
	control   bool
}

func (lf *labFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&lf.id, "lab", "", "run the lab's code (yours, or --reference) as the replicas: "+strings.Join(labrun.IDs(), ", "))
	fs.StringVar(&lf.schedule, "schedule", "", "with --lab: a prepared fault schedule ("+strings.Join(labrun.ScheduleNames(), ", ")+"; default pause-owner)")
	fs.BoolVar(&lf.reference, "reference", false, "with --lab: run the reference solution instead of your code")
	fs.BoolVar(&lf.control, "control", false, "with --lab: read faults from standard input, one a line: pause|resume|cut|heal|crash|restart REPLICA (the lab screen's keys); end (or the input's end) ends a --schedule "+labrun.ByHand+" run")
}

// used says whether a --lab-only flag was given.
func (lf *labFlags) used(fs *flag.FlagSet) bool {
	used := false
	fs.Visit(func(f *flag.Flag) {
		used = used || f.Name == "schedule" || f.Name == "reference" || f.Name == "control"
	})
	return used
}

// check validates a --lab command line.
func (lf *labFlags) check(rf runFlags, name string, rest []string, fs *flag.FlagSet) (runFlags, error) {
	rf.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { rf.set[f.Name] = true })
	switch {
	case lf.id == "":
		return rf, Usagef("--schedule, --reference and --control go with --lab LAB (%s)", strings.Join(labrun.IDs(), ", "))
	case name != "":
		return rf, Usagef("--lab runs the lab's code as the replicas: give no experiment name (got %q)", name)
	case len(rest) > 0:
		return rf, Usagef("unexpected argument %q", rest[0])
	case lf.schedule != "" && rf.faults != "":
		return rf, Usagef("--schedule and --faults: give one of them")
	case lf.schedule != "" && labrun.ScheduleSays(lf.schedule) == "":
		return rf, Usagef("--schedule %s: no such schedule (%s)", lf.schedule, strings.Join(labrun.ScheduleNames(), ", "))
	case labrun.EndsByHand(lf.schedule) && !lf.control:
		return rf, Usagef("--schedule %s injects no faults and runs until you end it: give --control too, then type faults (pause r2) and end, a line each, on standard input", lf.schedule)
	case rf.stepDelay != 0:
		return rf, Usagef("--step-delay does not go with --lab")
	}
	l, ok := runnerLab(lf.id)
	if !ok {
		return rf, Usagef("--lab %s: no runner for that lab (labs with one: %s)", lf.id, strings.Join(runnerChoices(), ", "))
	}
	lf.id = l.ID
	if lf.schedule == "" && rf.faults == "" {
		lf.schedule = "pause-owner"
	}
	rf.name = labrun.ScenarioName(l.ID)
	rf.lab = *lf
	return rf, nil
}

// runnerLab finds the lab a learner names as the course numbers it
// ("7.2", "lab 7.2", as the lessons and the lab screen say) or by its
// folder ("07", "07_election"), among the labs with a runner.
func runnerLab(name string) (labrun.Lab, bool) {
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "lab "))
	c := lessons.Outline(content.Sources()) // the lessons' lists of labs, which number them
	for _, id := range labrun.IDs() {
		// As grade takes them: the course's number (7.2), the folder's
		// number with or without its zero (07, 7) or its name (election).
		num, slug, _ := strings.Cut(id, "_")
		if name == c.LabNumber(id) || "0"+name == num || name == slug {
			return labrun.Find(id)
		}
	}
	return labrun.Find(name)
}

// runnerChoices names the labs with a runner as a learner may give them:
// "7.2 (07_election)".
func runnerChoices() []string {
	c := lessons.Outline(content.Sources())
	var out []string
	for _, id := range labrun.IDs() {
		if n := c.LabNumber(id); n != "" {
			id = n + " (" + id + ")"
		}
		out = append(out, id)
	}
	return out
}

// runLab builds the lab's replica program and runs it as the replicas:
// exit 0 when the code held, 1 when the checker found a violation.
func runLab(ctx context.Context, env *Env, rf runFlags) error {
	start := time.Now()
	sc := labrun.Scenario(rf.lab.id)
	if err := rf.withLabSchedule(); err != nil {
		return err
	}
	if err := checkRanges(sc, rf.params); err != nil {
		return err
	}
	root, err := labRoot()
	if err != nil {
		return couldNotRun(ctx, env, rf, err, time.Since(start))
	}
	l, _ := labrun.Find(rf.lab.id)
	bin, err := labrun.BuildReporting(ctx, root, l, rf.lab.reference, buildPrinter(env, rf.asJSON, l.ID))
	if err != nil {
		return couldNotRun(ctx, env, rf, err, time.Since(start))
	}
	built := time.Since(start)
	// On a class cluster the replicas run under the learner's prefix,
	// with the learner's TLS files and user; a schedule that moves etcd's
	// raft leader needs the in-process cluster.
	where := *sc
	where.NeedsCluster = labrun.NeedsCluster(rf.lab.schedule, rf.params.Faults)
	xenv, done, err := experimentEnv(ctx, env, &where)
	if err != nil {
		return err
	}
	defer done()
	spec := l.Spec(bin, rf.lab.reference, rf.lab.schedule)
	var end func() // ends a by-hand run; nil for a run that ends by itself
	if labrun.EndsByHand(rf.lab.schedule) {
		ended := make(chan struct{})
		spec.End, end = ended, sync.OnceFunc(func() { close(ended) })
	}
	run, err := labrun.Start(ctx, spec, rf.params, xenv, labPrinter(env.Stdout, rf.asJSON, rf.verbose))
	if err != nil {
		return fmt.Errorf("lab %s: %w", l.ID, err)
	}
	if rf.lab.control {
		go labrun.Control(run, env.Stdin, env.Stderr, end)
	}
	v, err := run.Wait()
	recorded := recordRun(env, rf.record, run.History())
	if ctx.Err() != nil {
		return unlessUnsaved(reportVerdict(ctx, env.Stdout, rf.name, rf.asJSON, v, err, time.Since(start)), recorded)
	}
	if rf.asJSON {
		fmt.Fprintln(env.Stdout, verdictLine(v, err, time.Since(start), rf.faults))
		return unlessUnsaved(labExit(v, err), recorded)
	}
	fmt.Fprintf(env.Stdout, "built in %.1f s; %s\n", built.Seconds(), runningAfter(run.History(), start))
	return unlessUnsaved(labVerdict(env, v, err, time.Since(start)), recorded)
}

// labVerdict prints a lab run's verdict: HELD when the checker found
// nothing wrong, VIOLATION with what it found otherwise, after a line
// for each violation naming its rule (the property) and what broke it.
func labVerdict(env *Env, v history.Verdict, err error, took time.Duration) error {
	mark := "HELD"
	if !v.Showed {
		mark = "VIOLATION"
	}
	for _, f := range v.Violations() {
		name := f.Property
		if f.Violation != "" {
			name += " (" + f.Violation + ")"
		}
		fmt.Fprintf(env.Stdout, "violated: %s\n", name)
	}
	_, body := v.Told()
	fmt.Fprintf(env.Stdout, "verdict: %s: %s (%.1f s)\n", mark, body, took.Seconds())
	if err != nil {
		return fmt.Errorf("lab run: %w", err)
	}
	return labExit(v, nil)
}

// labExit is a lab run's exit status: 0 held, 1 a violation or a run
// that failed (history.ExitHeld, ExitViolation).
func labExit(v history.Verdict, err error) error {
	if err != nil {
		return fmt.Errorf("lab run: %w", err)
	}
	if !v.Showed {
		return &ExitError{Code: history.ExitViolation}
	}
	return nil
}

// labPrinter is eventPrinter that, in text mode, leaves out the
// leader's accepted writes (ten a second) unless verbose.
func labPrinter(out io.Writer, asJSON, verbose bool) func(history.Event) {
	print := eventPrinter(out, asJSON, verbose)
	return func(e history.Event) {
		if e.Kind == history.WriteAccepted && !asJSON && !verbose {
			return
		}
		print(e)
	}
}

// runningAfter says when every replica ran the lab's code, counted from
// the command's start.
func runningAfter(h history.History, start time.Time) string {
	for _, e := range h.Events {
		if e.Kind == history.Measured && e.Figure == "replicas_running_s" {
			return fmt.Sprintf("every replica running %.2f s after the command started", h.Started.Add(e.At).Sub(start).Seconds())
		}
	}
	return "not every replica came to run"
}

// withLabSchedule reads a --faults file of a lab run: its faults, and its
// seed, replicas and TTL unless given.
func (rf *runFlags) withLabSchedule() error {
	h, err := rf.replayed()
	if h == nil || err != nil {
		return err
	}
	p := &rf.params
	p.Faults = labrun.FaultSchedule(h)
	if len(p.Faults) == 0 {
		return Usagef("--faults %s: the run has no faults to replay", rf.faults)
	}
	for _, f := range p.Faults {
		if f.Kind == history.ClockChanged {
			return Usagef("--faults %s: %v", rf.faults, labrun.ErrClock)
		}
	}
	return nil
}

// labRoot is the folder whose labs/ holds the learner's code: a
// checkout, or a folder `playground init` wrote (its go.mod is the
// course's too).
func labRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("lab run: %w", err)
	}
	root := grade.FindRoot(wd)
	if root == "" {
		return "", errors.New("lab run: not inside a checkout of the course (a folder whose go.mod is " + grade.ModulePath + " with labs/ in it); clone it, or make one with `playground init DIR`, and run the lab there")
	}
	return root, nil
}

// couldNotRun reports a lab whose replica program could not be built
// (not written yet, does not compile, the build timed out): the reason
// on standard error (and, with --json, as the last line: a
// history.Report whose outcome is could-not-run), exit code 2, never 1,
// which names a violation.
func couldNotRun(ctx context.Context, env *Env, rf runFlags, err error, took time.Duration) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintln(env.Stderr, "playground: "+err.Error())
	if rf.asJSON {
		b, _ := json.Marshal(history.CouldNotRun(rf.name, err, took))
		fmt.Fprintln(env.Stdout, string(b))
	}
	return &ExitError{Code: history.ExitCouldNotRun}
}

// buildPrinter shows a build's progress, unless it is quick: in text, a
// line on standard error once it has taken a second, then one every
// buildLineEvery with the time so far, the packages compiled and the
// last one named; with --json, a line {"kind":"build",...} on standard
// output at most every second, which the lab screen reads to show the
// same. A build that finishes within the first second says nothing.
func buildPrinter(env *Env, asJSON bool, lab string) func(labrun.BuildProgress) {
	var mu sync.Mutex
	var said time.Duration = -1 // elapsed at the last line; -1 none yet
	return func(p labrun.BuildProgress) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case p.Elapsed < time.Second:
			return
		case asJSON && (said < 0 || p.Elapsed-said >= time.Second):
			fmt.Fprintln(env.Stdout, string(p.JSONLine(lab)))
		case asJSON:
			return
		case said < 0:
			fmt.Fprintf(env.Stderr, "building the replica program of labs/%s: a first build compiles etcd's client and grpc (README: how long it takes)\n", lab)
		case p.Elapsed-said >= buildLineEvery:
			fmt.Fprintf(env.Stderr, "  building: %s\n", p)
		default:
			return
		}
		said = p.Elapsed
	}
}

// buildLineEvery is how often the text of a long build says how far it
// has come.
const buildLineEvery = 10 * time.Second
