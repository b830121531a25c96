package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

// replays replays a saved faults file n times, one after another, with
// the corpus entry named only (or the reference) as the learner's code,
// and says how often the same violation came back.
func replays(ctx context.Context, root, tmp, lab, only, file string, n int) int {
	l, ok := labrun.Find(strings.TrimSpace(lab))
	if !ok {
		fmt.Fprintf(os.Stderr, "explorebench: -replay needs one lab (-labs 06), not %q\n", lab)
		return 2
	}
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	h, err := labrun.ReadHistory(f)
	f.Close()
	if err != nil || h.Verdict == nil || h.Verdict.Showed {
		fmt.Fprintf(os.Stderr, "explorebench: %s is not a failing lab run's history (%v)\n", file, err)
		return 2
	}
	want := violationNames(*h.Verdict)
	es, err := corpus(root, tmp, l, "all")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	source := ""
	for _, e := range es {
		if only != "" && e.name == only {
			source = e.source
		}
	}
	if source == "" {
		fmt.Fprintf(os.Stderr, "explorebench: no corpus entry %q in lab %s\n", only, l.ID)
		return 2
	}
	bin, err := labrun.BuildWith(ctx, root, l, source)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	same := 0
	for i := range n {
		got := replayOnce(ctx, l, bin, h)
		if reproduces(want, got) {
			same++
		}
		fmt.Printf("replay %d of %d: %s (load %s)\n", i+1, n, orHeld(got), load())
	}
	fmt.Printf("replay of %s: the same violation (%s) %d of %d times (bar 9 of 10)\n", file, want, same, n)
	if same*10 < 9*n {
		return 1
	}
	return 0
}

// replayOnce runs the file's faults as experiment run --faults does and
// names the violations the run found ("" if it held).
func replayOnce(ctx context.Context, l labrun.Lab, bin string, h history.History) string {
	p := history.Params{Seed: h.Params.Seed, Replicas: h.Params.Replicas, TTL: h.Timing.AskedTTL, Watch: h.Params.Watch, Faults: labrun.FaultSchedule(&h)}
	run, err := labrun.Start(ctx, l.Spec(bin, false, ""), p, experiment.Env{}, nil)
	if err != nil {
		return "could not run: " + err.Error()
	}
	v, err := run.Wait()
	if err != nil {
		return "could not run: " + err.Error()
	}
	if v.Showed {
		return ""
	}
	return violationNames(v)
}

// reproduces says whether a replay broke every rule the saved run
// broke (got may name more: a property the checker gained since the
// file was saved judges the same run too).
func reproduces(want, got string) bool {
	if want == "" || got == "" {
		return want == got
	}
	broke := map[string]bool{}
	for _, n := range strings.Split(got, ",") {
		broke[n] = true
	}
	for _, n := range strings.Split(want, ",") {
		if !broke[n] {
			return false
		}
	}
	return true
}

// violationNames names a verdict's failed findings, sorted as found.
func violationNames(v history.Verdict) string {
	var out []string
	for _, f := range v.Findings {
		if !f.Held {
			out = append(out, firstName(f.Property, f.Violation))
		}
	}
	return strings.Join(out, ",")
}
