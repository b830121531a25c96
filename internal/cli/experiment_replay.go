package cli

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/labrun"
)

// replayExperiment prints a recorded run's events and the checker's
// verdict on them again, without etcd.
func replayExperiment(env *Env, args []string) error {
	fs := flag.NewFlagSet("experiment replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON event a line, then the verdict as JSON")
	verbose := fs.Bool("v", false, "also print every lease renewal and key change (text mode)")
	path, rest, err := parseWithName(fs, args)
	if err != nil {
		return err
	}
	if path == "" {
		return Usagef("replay needs a history FILE (written by experiment run --record, or by the TUI)")
	}
	if len(rest) > 0 {
		return Usagef("unexpected argument %q", rest[0])
	}
	h, err := readHistoryFile(path)
	if err != nil {
		return err
	}
	// A lab run's history is printed and judged as the live run was.
	lab := labrun.IsLabRun(h.Scenario)
	print := eventPrinter(env.Stdout, *asJSON, *verbose)
	if lab {
		print = labPrinter(env.Stdout, *asJSON, *verbose)
	}
	for _, e := range h.Events {
		print(e)
	}
	v := experiment.Replay(&h, runScenario(h.Scenario))
	var took time.Duration
	if n := len(h.Events); n > 0 {
		took = h.Events[n-1].At
	}
	if lab && !*asJSON {
		return labVerdict(env, v, nil, took)
	}
	printExperimentVerdict(env.Stdout, *asJSON, v, nil, took)
	if h.Verdict != nil && h.Verdict.Showed != v.Showed && !*asJSON {
		fmt.Fprintf(env.Stderr, "note: the run itself concluded %q\n", h.Verdict.Sentence())
	}
	if !v.Showed {
		return &ExitError{Code: 1}
	}
	return nil
}
