package cli

import (
	"context"
	"fmt"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
)

func init() {
	Register(&Command{
		Name:    "experiment",
		Usage:   "experiment list | run NAME | run --lab LAB | explore --lab LAB | replay FILE",
		Summary: "list the experiments, run one headless on real etcd, or replay a recorded run",
		Help: `Subcommands:
  list               the experiments, one a line
  run NAME [flags]   run one and print its events and verdict
  replay FILE        print a recorded run's events and verdict again, without
                     etcd
  explore --lab LAB  faults at every request your lab code sends: a calm run
                     finds the call sites, then one run per site, fault
                     (fail, lose, hold, pause, cut, leader, sever, stop,
                     refuse, revoke)
                     and role, then
                     pairs, within --budget (2m); each failure is run again
                     with the reference on the same faults, shrunk, and
                     saved as a faults file (--save FILE) that run --faults
                     replays. --seed N, --json, --all (keep going after the
                     first violation). Exit 0 held, 1 violation, 2 could
                     not run.

Flags of run:
  --json             one JSON event a line, then the verdict as JSON
  --seed N           seed for the run's random choices (default 1)
  --replicas N       number of replicas (0: the experiment's default)
  --ttl SECONDS      lease TTL (0: the experiment's default)
  --step-delay D     wait D (e.g. 15s) at every step, as a slow reader would
  --record FILE      save the run's history (events, faults, etcd's answers)
                     to FILE
  --faults FILE      inject the learner faults recorded in FILE at the same
                     steps (its seed, replicas and TTL unless given here)
  -v                 also print every lease renewal and every key etcd changed

Your own lab code as the replicas (run with no NAME):
  --lab LAB          run N copies of the lab's code (labs/LAB), each a process
                     behind its own fault proxy, and judge what it did; exit 0
                     when it held, 1 on a violation (named), 2 when it could
                     not run: not written yet, does not compile (the
                     compiler's message), or the build timed out
  --schedule NAME    faults aimed at the leader: pause-owner (default),
                     cut-off-owner, crash-owner, crash-during-stepdown,
                     flapping-network; at a replica that waits:
                     cut-off-waiter, pause-waiter; etcd-leader-change (moves
                     etcd's raft leader: in-process 3-member cluster only),
                     calm, or by-hand (no faults but yours, with --control;
                     it runs until an end line, 5 minutes at most)
  --control          read faults from standard input, a line each: pause,
                     resume, cut, heal, crash or restart, then a replica
                     (pause r2); end (or the input's end) ends a by-hand run
  --reference        run the reference solution on the same schedule
  --faults FILE      with --lab: replay the faults of a recorded lab run
                     With --etcd-endpoints or --class, the replicas run on
                     that cluster under your prefix, as your etcd user.

Flags of replay: --json, -v, as for run.

Exit codes: 0 the experiment showed what it exists to show, 1 it did not
(or failed, or the --record file could not be saved), 2 bad usage, 3 it
needs the in-process etcd and --etcd-endpoints points elsewhere, 130/143
stopped by Ctrl-C or SIGTERM.`,
		Run: runExperiment,
	})
}

// Exit codes of `experiment run`: 0 the experiment showed what it exists to
// show, 1 it did not (or failed), 2 bad usage, 3 it needs the in-process
// etcd and --etcd-endpoints points elsewhere.
const exitNeedsInProcess = 3

func runExperiment(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("usage: experiment list | experiment run NAME [flags] | experiment replay FILE [--json]")
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			return Usagef("list takes no arguments")
		}
		listExperiments(env)
		return nil
	case "run":
		return runOneExperiment(ctx, env, args[1:])
	case "replay":
		return replayExperiment(env, args[1:])
	case "explore":
		return runExplore(ctx, env, args[1:])
	default:
		return Usagef("unknown subcommand %q (list, run, explore or replay)", args[0])
	}
}

func listExperiments(env *Env) {
	for _, s := range scenario.Scenarios() {
		where := ""
		if s.SharedCluster(env.Etcd) != nil {
			where = " [in-process etcd only]"
		}
		fmt.Fprintf(env.Stdout, "%-30s %s%s\n", s.Name, s.Title, where)
	}
}

func needsWhy(sc *experiment.Scenario) string {
	if sc.NeedsCluster {
		return "this experiment stops etcd members or moves the raft leader, which only the playground's in-process 3-member cluster allows"
	}
	if sc.OwnClusters {
		return "this experiment starts in-process etcd clusters of its own, with raft settings of their own"
	}
	return "this experiment turns on etcd authentication, which the playground only does to its own in-process etcd"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
