package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
)

func init() {
	Register(&Command{
		Name:    "experiment",
		Usage:   "experiment list | run NAME",
		Summary: "list the experiments, or run one headless on real etcd",
		Help: `Subcommands:
  list               the experiments, one a line
  run NAME [flags]   run one and print its events and verdict

Flags of run:
  --json             one JSON event a line, then the verdict as JSON
  --seed N           seed for the run's random choices (default 1)
  --replicas N       number of replicas (0: the experiment's default)
  --ttl SECONDS      lease TTL (0: the experiment's default)
  -v                 also print every lease renewal

Exit codes: 0 the experiment showed what it exists to show, 1 it did not
(or failed), 2 bad usage, 3 it needs the in-process etcd and
--etcd-endpoints points elsewhere, 130/143 stopped by Ctrl-C or SIGTERM.`,
		Run: runExperiment,
	})
}

// Exit codes of `experiment run`: 0 the experiment showed what it exists to
// show, 1 it did not (or failed), 2 bad usage, 3 it needs the in-process
// etcd and --etcd-endpoints points elsewhere.
const exitNeedsInProcess = 3

func runExperiment(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("usage: experiment list | experiment run NAME [--json] [--seed N] [--replicas N] [--ttl SECONDS] [-v]")
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			return Usagef("list takes no arguments")
		}
		for _, s := range experiment.Scenarios() {
			where := ""
			if s.SharedCluster(env.Etcd) != nil {
				where = " [in-process etcd only]"
			}
			fmt.Fprintf(env.Stdout, "%-30s %s%s\n", s.Name, s.Title, where)
		}
		return nil
	case "run":
		return runOneExperiment(ctx, env, args[1:])
	default:
		return Usagef("unknown subcommand %q (list or run)", args[0])
	}
}

func runOneExperiment(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("experiment run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON event a line, then the verdict as JSON")
	seed := fs.Uint64("seed", 1, "seed for the run's random choices")
	replicas := fs.Int("replicas", 0, "number of replicas (0: the experiment's default)")
	ttl := fs.Int64("ttl", 0, "lease TTL in seconds (0: the experiment's default)")
	verbose := fs.Bool("v", false, "also print every lease renewal (text mode)")
	// Accept the name before or after the flags.
	var name string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return Usagef("%v", err)
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return Usagef("%v", err)
		}
	}
	if name == "" {
		return Usagef("run needs an experiment NAME (see: playground experiment list)")
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	sc := experiment.Lookup(name)
	if sc == nil {
		return Usagef("no experiment named %q (see: playground experiment list)", name)
	}
	if lo, hi := sc.ReplicaRange(); *replicas != 0 && (*replicas < lo || *replicas > hi) {
		if lo == hi {
			return Usagef("--replicas %d: %s runs exactly %d replica(s)", *replicas, name, lo)
		}
		return Usagef("--replicas %d: %s runs %d to %d replicas", *replicas, name, lo, hi)
	}
	if lo, hi := sc.TTLRange(); *ttl != 0 && (*ttl < lo || *ttl > hi) {
		return Usagef("--ttl %d: %s takes a lease TTL of %d to %d seconds", *ttl, name, lo, hi)
	}
	xenv := experiment.Env{}
	if env.Etcd.Remote() {
		if sc.SharedCluster(env.Etcd) != nil {
			fmt.Fprintf(env.Stderr, "%s: %s\nRun it without --etcd-endpoints: it starts its own in-process etcd.\n", name, needsWhy(sc))
			return &ExitError{Code: exitNeedsInProcess}
		}
		r, err := embedetcd.Connect(ctx, env.Etcd, embedetcd.LearnerPrefix(env.Etcd))
		if err != nil {
			return err
		}
		defer r.Close()
		xenv.Etcd = r
	}
	p := experiment.Params{Replicas: *replicas, TTL: *ttl, Seed: *seed}
	out := env.Stdout
	sink := func(e experiment.Event) {
		switch {
		case e.Kind == experiment.Finished:
			// printed below with the whole verdict
		case *asJSON:
			b, _ := json.Marshal(e)
			fmt.Fprintln(out, string(b))
		case e.Kind == experiment.LeaseRenewed && !*verbose:
		default:
			fmt.Fprintln(out, e.String())
		}
	}
	start := time.Now()
	v, err := experiment.Execute(ctx, name, p, xenv, sink)
	if errors.Is(err, experiment.ErrNeedsCluster) || errors.Is(err, experiment.ErrNeedsInProcess) {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return &ExitError{Code: exitNeedsInProcess}
	}
	if ctx.Err() != nil {
		// Stopped by Ctrl-C or SIGTERM: whatever the script concluded
		// from a run cut short is not a verdict.
		if *asJSON {
			b, _ := json.Marshal(struct {
				Kind     string  `json:"kind"`
				Scenario string  `json:"scenario"`
				Seconds  float64 `json:"seconds"`
			}{"interrupted", name, time.Since(start).Seconds()})
			fmt.Fprintln(out, string(b))
		} else {
			fmt.Fprintf(out, "interrupted after %.1f s: no verdict\n", time.Since(start).Seconds())
		}
		return ctx.Err()
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			Kind string `json:"kind"`
			experiment.Verdict
			Seconds float64 `json:"seconds"`
			Error   string  `json:"error,omitempty"`
		}{"verdict", v, time.Since(start).Seconds(), errString(err)})
		fmt.Fprintln(out, string(b))
	} else {
		mark := "SHOWN"
		if !v.Showed {
			mark = "NOT SHOWN"
		}
		fmt.Fprintf(out, "verdict: %s: %s (%.1f s)\n", mark, v.Summary, time.Since(start).Seconds())
	}
	if err != nil {
		return fmt.Errorf("experiment %s: %w", name, err)
	}
	if !v.Showed {
		return &ExitError{Code: 1}
	}
	return nil
}

func needsWhy(sc *experiment.Scenario) string {
	if sc.NeedsCluster {
		return "this experiment stops etcd members or moves the raft leader, which only the playground's in-process 3-member cluster allows"
	}
	return "this experiment turns on etcd authentication, which the playground only does to its own in-process etcd"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
