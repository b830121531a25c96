// Command explorebench measures `playground experiment explore` against a
// corpus of lab 05-09 solutions: the wrong ones
// (solutions/<id>/testdata/explore/*.patch, each a realistic mistake a
// run can show, applied to the reference) and the correct ones in other
// styles (solutions/<id>/testdata/variants/*.go and explore/*.go, and the
// reference itself). For each lab it prints how many wrong ones explore
// showed in its budget (the share shown), how many correct ones it
// called wrong (false alarms), and how long each exploration took, with
// the machine's load beside it (the times grow with it).
//
// Usage:
//
//	go run ./internal/tools/explorebench [-labs 05,06,07,08,09] [-budget 2m] [-only NAME] [-wrong-only|-right-only] [-v]
//	go run ./internal/tools/explorebench -corpus bugs -wrong-only -labs 06   # the graders' bugs/ patches
//	go run ./internal/tools/explorebench -corpus bugs -wrong-only -labs 07 -only spin_retry -save DIR
//	go run ./internal/tools/explorebench -replay FILE -labs 06 -only NAME [-n 10]
//
// It exits 1 when fewer than 90% of the wrong ones are shown or a
// correct one raised an alarm. -v says each run's end as it comes and
// each entry's grid after it (on stderr): what a miss needs to be
// understood. With -replay it measures instead how often
// a saved faults file (explore's smallest failing run) replays to the
// same violation with the corpus entry NAME as the learner's code, as
// `experiment run --lab --faults FILE` replays it: bar 9 in 10.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

func main() { os.Exit(run()) }

// entry is one solution of the corpus.
type entry struct {
	lab    labrun.Lab
	name   string
	source string // a file to run in place of the learner's
	wrong  bool
	says   string // the patch's first line
}

func run() int {
	labsFlag := flag.String("labs", "05,06,07,08,09", "the labs, comma separated")
	budget := flag.Duration("budget", labrun.DefaultBudget, "explore's budget per solution")
	only := flag.String("only", "", "only the entries whose name contains this")
	wrongOnly := flag.Bool("wrong-only", false, "only the wrong solutions")
	rightOnly := flag.Bool("right-only", false, "only the correct solutions (the variants and the reference): the false alarms")
	replay := flag.String("replay", "", "a saved faults file: replay it -n times instead")
	n := flag.Int("n", 10, "with -replay: how many times")
	corpusFlag := flag.String("corpus", "explore", "the wrong solutions: explore (testdata/explore) or bugs (the graders' testdata/bugs, less those listed in unshowable.txt)")
	flag.StringVar(&saveDir, "save", "", "save each violation's smallest run in this folder (LAB-NAME.json), for -replay")
	flag.BoolVar(&verbose, "v", false, "say each run's end and each entry's grid on stderr")
	flag.Parse()
	wd, _ := os.Getwd()
	root := grade.FindRoot(wd)
	if root == "" {
		fmt.Fprintln(os.Stderr, "explorebench: run it inside the checkout")
		return 2
	}
	tmp, err := os.MkdirTemp("", "explorebench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	if *replay != "" {
		return replays(ctx, root, tmp, *labsFlag, *only, *replay, *n)
	}
	var shown, wrong, alarms, right int
	for _, id := range strings.Split(*labsFlag, ",") {
		l, ok := labrun.Find(strings.TrimSpace(id))
		if !ok {
			fmt.Fprintf(os.Stderr, "explorebench: no lab %s\n", id)
			return 2
		}
		es, err := corpus(root, tmp, l, *corpusFlag)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for _, e := range es {
			if (*only != "" && !strings.Contains(e.name, *only)) || (*wrongOnly && !e.wrong) || (*rightOnly && e.wrong) {
				continue
			}
			found, took, err := explore(ctx, root, e, *budget)
			line := fmt.Sprintf("%s %-28s %-5s %5.0f s  load %s", l.ID, e.name, kind(e.wrong), took.Seconds(), load())
			switch {
			case err != nil:
				fmt.Printf("%s  could not run: %v\n", line, err)
				continue
			case e.wrong:
				wrong++
				if found != "" {
					shown++
				}
			default:
				right++
				if found != "" {
					alarms++
				}
			}
			fmt.Printf("%s  %s\n", line, orHeld(found))
		}
	}
	share := 0.0
	if wrong > 0 {
		share = 100 * float64(shown) / float64(wrong)
	}
	fmt.Printf("explore: %d of %d wrong solutions shown (%.0f%%, bar 90%%); false alarms: %d of %d correct\n", shown, wrong, share, alarms, right)
	if share < 90 || alarms > 0 {
		return 1
	}
	return 0
}

func kind(wrong bool) string {
	if wrong {
		return "wrong"
	}
	return "right"
}

func orHeld(found string) string {
	if found == "" {
		return "held"
	}
	return "VIOLATION " + found
}

// load is the machine's load average, as uptime says it.
func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// corpus lists a lab's entries: each wrong patch of the set named
// (explore or bugs) applied to the reference (written to tmp), then the
// correct ones.
func corpus(root, tmp string, l labrun.Lab, set string) ([]entry, error) {
	sol := filepath.Join(root, "solutions", l.ID, l.File)
	ref, err := os.ReadFile(sol)
	if err != nil {
		return nil, err
	}
	var out []entry
	patches, err := wrongPatches(root, l, set)
	if err != nil {
		return nil, err
	}
	for _, p := range patches {
		text, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		pt, err := grade.ParsePatch(filepath.Base(p), string(text))
		if err != nil {
			return nil, err
		}
		src, err := pt.Apply(string(ref))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		dst := filepath.Join(tmp, l.ID+"-"+strings.TrimSuffix(filepath.Base(p), ".patch")+".go")
		if err := os.WriteFile(dst, []byte(src), 0o644); err != nil {
			return nil, err
		}
		out = append(out, entry{lab: l, name: strings.TrimSuffix(filepath.Base(p), ".patch"), source: dst, wrong: true, says: pt.Comment})
	}
	out = append(out, entry{lab: l, name: "reference", source: sol})
	for _, dir := range []string{"variants", "explore"} {
		vs, _ := filepath.Glob(filepath.Join(root, "solutions", l.ID, "testdata", dir, "*.go"))
		for _, v := range vs {
			out = append(out, entry{lab: l, name: dir + "/" + strings.TrimSuffix(filepath.Base(v), ".go"), source: v})
		}
	}
	return out, nil
}

// explore explores one entry: the violations' names ("" if it held).
func explore(ctx context.Context, root string, e entry, budget time.Duration) (string, time.Duration, error) {
	start := time.Now()
	o := labrun.ExploreOptions{Root: root, Lab: e.lab, Source: e.source, Budget: budget, Seed: 1}
	if verbose {
		o.Progress = func(p labrun.ExploreProgress) {
			fmt.Fprintf(os.Stderr, "  %s %3.0f s  %d/%d  %s\n", e.name, time.Since(start).Seconds(), p.Done, p.Planned, p.Last)
		}
	}
	rep, err := labrun.Explore(ctx, o)
	if err != nil {
		return "", time.Since(start), err
	}
	if verbose {
		printGrid(e.name, rep)
	}
	if len(rep.Violations) > 0 && saveDir != "" {
		if err := save(filepath.Join(saveDir, e.lab.ID+"-"+filepath.Base(e.name)+".json"), rep.Violations[0].History); err != nil {
			fmt.Fprintf(os.Stderr, "explorebench: %v\n", err)
		}
	}
	var names []string
	if rep.Calm != nil {
		names = append(names, "calm:"+firstName(rep.Calm[0].Property, rep.Calm[0].Violation))
	}
	for _, v := range rep.Violations {
		f := v.Findings[0]
		names = append(names, firstName(f.Property, f.Violation)+" at "+v.Faults[0].String())
	}
	return strings.Join(names, "; "), rep.Took, nil
}

// verbose: -v.
var verbose bool

// saveDir: -save.
var saveDir string

// save writes a violation's smallest run where -replay reads it.
func save(path string, h history.History) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := history.Write(f, h); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// printGrid says an exploration's grid on stderr, a row a line: the
// site, the role, and each fault kind's cell.
func printGrid(name string, rep *labrun.ExploreReport) {
	fmt.Fprintf(os.Stderr, "  %s: %d runs of %d planned, %d skipped, %d limits\n", name, rep.Runs, rep.Planned, rep.Skipped, len(rep.Limits))
	for _, row := range rep.Grid {
		line := fmt.Sprintf("    %-40s %-8s", row.Site.String(), row.Role)
		for _, k := range history.FaultKinds() {
			line += fmt.Sprintf(" %s=%s", k, row.Cells[k])
		}
		fmt.Fprintln(os.Stderr, line)
	}
	for _, v := range rep.Violations {
		fmt.Fprintf(os.Stderr, "    violation (confirmed %v, shrunk %q) at %s: %s\n", v.Confirmed, v.Shrunk, describe(v.Faults), v.Findings[0].Text)
	}
	for _, l := range rep.Limits {
		if len(l.Reference) > 0 {
			fmt.Fprintf(os.Stderr, "    limit at %s: the reference's %s\n", describe(l.Faults), l.Reference[0].Text)
		}
	}
}

// describe says faults in a line.
func describe(fs []history.RequestFault) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return strings.Join(out, "; ")
}

func firstName(property, violation string) string {
	if violation != "" {
		return violation
	}
	return property
}
