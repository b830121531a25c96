package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/statedir"
)

// `playground experiment explore --lab NN`: faults at every request the
// learner's code sends (internal/labrun's Explore), a coverage grid, and
// the smallest failing run saved as a faults file. Exit codes: 0 every
// explored fault held, 1 a violation (named, with the faults file), 2
// could not run (bad usage, not written, does not compile).

// exploreFlags are explore's flags.
type exploreFlags struct {
	lab    string
	budget time.Duration
	seed   uint64
	asJSON bool
	save   string
	all    bool
	source string
}

func parseExploreFlags(args []string) (exploreFlags, labrun.Lab, error) {
	var xf exploreFlags
	fs := flag.NewFlagSet("experiment explore", flag.ContinueOnError)
	fs.StringVar(&xf.lab, "lab", "", "the lab whose code to explore: "+strings.Join(labrun.IDs(), ", "))
	fs.DurationVar(&xf.budget, "budget", labrun.DefaultBudget, "time for the runs under faults")
	fs.Uint64Var(&xf.seed, "seed", 1, "fixes the order the faults are tried in")
	fs.BoolVar(&xf.asJSON, "json", false, "print the report as one JSON document")
	fs.StringVar(&xf.save, "save", "", "save the smallest failing run's faults to this file")
	fs.BoolVar(&xf.all, "all", false, "keep going after the first violation")
	fs.StringVar(&xf.source, "source", "", "explore this file in place of the lab's (a corpus entry)")
	rest, err := parseFlags(fs, args)
	switch {
	case err != nil:
		return xf, labrun.Lab{}, err
	case len(rest) > 0:
		return xf, labrun.Lab{}, Usagef("unexpected argument %q", rest[0])
	case xf.lab == "":
		return xf, labrun.Lab{}, Usagef("explore needs --lab LAB (%s)", strings.Join(runnerChoices(), ", "))
	case xf.budget <= 0:
		return xf, labrun.Lab{}, Usagef("--budget %s: give a positive time (2m)", xf.budget)
	}
	l, ok := runnerLab(xf.lab)
	if !ok {
		return xf, labrun.Lab{}, Usagef("--lab %s: no runner for that lab (labs with one: %s)", xf.lab, strings.Join(runnerChoices(), ", "))
	}
	return xf, l, nil
}

// runExplore explores a lab's code and reports.
func runExplore(ctx context.Context, env *Env, args []string) error {
	xf, l, err := parseExploreFlags(args)
	if err != nil {
		return err
	}
	root, err := labRoot()
	if err != nil {
		return err
	}
	var mu sync.Mutex
	start := time.Now()
	o := labrun.ExploreOptions{Root: root, Lab: l, Source: xf.source, Budget: xf.budget, Seed: xf.seed, All: xf.all,
		Progress: func(p labrun.ExploreProgress) {
			mu.Lock()
			defer mu.Unlock()
			e := progressEvent(l.ID, p, time.Since(start))
			if xf.asJSON {
				// One event a line, as experiment run --json prints
				// them (the lab screen shows them as the run's).
				b, _ := json.Marshal(e)
				fmt.Fprintln(env.Stdout, string(b))
				return
			}
			fmt.Fprintln(env.Stderr, e.Text)
		}}
	fmt.Fprintf(env.Stderr, "explore %s: building your code and the reference, then a calm run of each (a first build can take a minute or more)...\n", l.ID)
	rep, err := labrun.Explore(ctx, o)
	var be *labrun.BuildError
	switch {
	case errors.As(err, &be):
		fmt.Fprintln(env.Stderr, be.Error())
		return &ExitError{Code: 2}
	case errors.Is(err, labrun.ErrNotWritten):
		fmt.Fprintln(env.Stderr, err.Error())
		return &ExitError{Code: 2}
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		fmt.Fprintf(env.Stderr, "explore %s: %v\n", l.ID, err)
		return &ExitError{Code: 2}
	}
	saved, err := saveSmallest(rep, xf.save)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
	}
	if xf.asJSON {
		writeExploreJSON(env.Stdout, rep, saved)
	} else {
		printExplore(env.Stdout, l, rep, saved)
	}
	if len(rep.Violations) > 0 || rep.Calm != nil {
		return &ExitError{Code: 1}
	}
	return nil
}

// saveSmallest saves the first confirmed violation's (else the first
// violation's) smallest run as a faults
// file: to path, or in the state folder's explore/ when path is "". With
// no violation it saves the calm run to path, if given (the lab screen
// draws it), and names no faults file.
func saveSmallest(rep *labrun.ExploreReport, path string) (string, error) {
	if len(rep.Violations) == 0 {
		if path != "" && len(rep.CalmRun.Events) > 0 {
			// Asked for a file: the calm run, which a violation without
			// faults is, or which shows what held.
			return "", saveHistory(path, rep.CalmRun)
		}
		return "", nil
	}
	if path == "" {
		dir, err := statedir.Dir()
		if err != nil {
			return "", fmt.Errorf("save the faults: %w", err)
		}
		dir = filepath.Join(dir, "explore")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("save the faults: %w", err)
		}
		path = filepath.Join(dir, fmt.Sprintf("lab-%s-%s.json", rep.Lab, time.Now().UTC().Format("20060102-150405")))
	}
	pick, _ := picked(rep)
	if err := saveHistory(path, pick.History); err != nil {
		return "", err
	}
	return path, nil
}

// picked is the violation explore saves and shows: the first confirmed
// one (it came back when run again), else the first.
func picked(rep *labrun.ExploreReport) (labrun.Violation, bool) {
	if len(rep.Violations) == 0 {
		return labrun.Violation{}, false
	}
	for _, v := range rep.Violations {
		if v.Confirmed {
			return v, true
		}
	}
	return rep.Violations[0], true
}

// gridMark is how a cell is written in the text grid.
var gridMark = map[labrun.Cell]string{labrun.CellHeld: "held", labrun.CellViolated: "VIOL", labrun.CellLimit: "both",
	labrun.CellNotReached: "-", labrun.CellNotTried: ".", labrun.CellUnconfirmed: "rare"}

// printExplore writes the grid, then what was found.
func printExplore(out io.Writer, l labrun.Lab, rep *labrun.ExploreReport, saved string) {
	fmt.Fprintf(out, "explored labs/%s: %d runs (%d planned) in %.0f s\n\n", l.ID, rep.Runs, rep.Planned, rep.Took.Seconds())
	if rep.Calm != nil {
		fmt.Fprintln(out, "VIOLATION without any fault (the calm run):")
		for _, f := range rep.Calm {
			fmt.Fprintf(out, "  %s\n", f.Sentence())
		}
		fmt.Fprintf(out, "replay: playground experiment run --lab %s --schedule calm\n", l.ID)
		return
	}
	printGrid(out, rep.Grid)
	for _, lim := range rep.Limits {
		fmt.Fprintf(out, "\nlimit (the reference failed too, so not your bug): %s\n  yours: %s\n  reference: %s\n",
			orCalm(describeFaults(lim.Faults)), findingNames(lim.Learner), findingNames(lim.Reference))
	}
	for _, u := range rep.Unconfirmed {
		fmt.Fprintf(out, "\nseen, not counted (its smallest run broke it again in %d of %d reruns; it counts at 3 of 3, 5 of 6, or 9 of 10 while reruns are quick): %s\n  %s\n",
			u.Again, u.Tries, describeFaults(u.Faults), findingNames(u.Findings))
	}
	if len(rep.Violations) == 0 {
		tried := rep.Runs - 2 // the two calm runs
		fmt.Fprintf(out, "\nHELD: none of the %d runs under faults broke a rule that the reference keeps under the same fault.\n", tried)
		if rep.Skipped > 0 {
			fmt.Fprintf(out, "%d planned runs were not tried within the budget (--budget %s; . in the grid).\n", rep.Skipped, budgetSays(rep))
		}
		return
	}
	for i, v := range rep.Violations {
		fmt.Fprintf(out, "\nVIOLATION %d: %s\n", i+1, describeFaults(v.Faults))
		for _, f := range v.Findings {
			fmt.Fprintf(out, "  %s\n", f.Sentence())
		}
		fmt.Fprintf(out, "  the reference, under the same faults: %s\n", v.ReferenceSays())
		if len(v.Shrunk) > 0 {
			fmt.Fprintf(out, "  shrunk: %s\n", strings.Join(v.Shrunk, ", "))
		}
		fmt.Fprintf(out, "  confirmed: its smallest run broke it again in %d of %d reruns\n", v.Again, v.Tries)
		printDivergence(out, v)
	}
	if saved != "" {
		fmt.Fprintf(out, "\nsmallest faults saved: %s\nreplay: playground experiment run --lab %s --faults %s\n", saved, l.ID, saved)
	}
}

// gridWidth is the width the text grid is laid out in: a terminal's
// least.
const gridWidth = 80

// progressEvent is how far an exploration got, as a note at the time
// since it began (where the lab screen's timeline puts it).
func progressEvent(lab string, p labrun.ExploreProgress, since time.Duration) history.Event {
	line := fmt.Sprintf("explore %s: %d of %d runs, %d of %d call sites covered; %s", lab, p.Done, p.Planned, p.Covered, p.Sites, p.Last)
	return history.Event{At: since, Kind: history.Note, Value: float64(p.Done), Unit: "runs", Text: line}
}

// siteOf is a grid row as the report writes it, without its cells.
func siteOf(row labrun.SiteRow) history.Site {
	return history.Site{Role: row.Role, Where: fmt.Sprintf("%s:%d", row.Site.File, row.Site.Line), RPC: row.Site.RPC}
}

// printGrid writes call sites down, fault kinds across, in gridWidth
// columns (the kinds' names on two heading lines when one does not fit),
// then each site's function, which the grid's rows leave out.
func printGrid(out io.Writer, rows []labrun.SiteRow) {
	kinds := history.FaultKinds()
	var sites []history.Site
	for _, r := range rows {
		sites = append(sites, siteOf(r))
	}
	title, labels := history.GridLabels(sites)
	width, siteW, head := history.GridHeading(kinds, gridWidth, title)
	for _, l := range head {
		fmt.Fprintln(out, l)
	}
	for j, r := range rows {
		line := fmt.Sprintf("%-*s", siteW, ansi.Truncate(labels[j], siteW-1, "…"))
		for i, k := range kinds {
			line += fmt.Sprintf("%-*s", width(i), gridMark[r.Cells[k]])
		}
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(out, "(held: no rule broken; VIOL: a rule broken that the reference keeps;")
	fmt.Fprintln(out, " both: the reference broke it too; rare: broken, but not again nearly")
	fmt.Fprintln(out, " every time when rerun; -: the request was not sent under the fault;")
	fmt.Fprintln(out, " .: not tried within the budget)")
	seen := map[string]bool{}
	var funcs []string
	for _, r := range rows {
		w := fmt.Sprintf("%s:%d", path.Base(r.Site.File), r.Site.Line)
		if !seen[w] && r.Site.Func != "" {
			seen[w] = true
			funcs = append(funcs, w+" "+r.Site.Func)
		}
	}
	if len(funcs) > 0 {
		fmt.Fprintln(out, ansi.Wordwrap("the sites' functions: "+strings.Join(funcs, ", "), gridWidth, ""))
	}
}

func budgetSays(rep *labrun.ExploreReport) string {
	return fmt.Sprintf("%.0fs", rep.Took.Seconds())
}

// orCalm names a limit met without faults.
func orCalm(faults string) string {
	if faults == "" {
		return "the calm run, without any fault"
	}
	return faults
}

func describeFaults(fs []history.RequestFault) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.String())
	}
	return strings.Join(s, "; ")
}

func findingNames(fs []history.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Sentence())
	}
	return strings.Join(s, " ")
}

// exploreJSON is explore's report as --json writes it: the report a
// lab run's --json ends with (history.Report: the violations, the faults
// file, the grid as sites, the exit code), and what only an exploration
// has: its runs and the limits it met.
type exploreJSON struct {
	history.Report
	Runs    int         `json:"runs"`
	Planned int         `json:"planned"`
	Skipped int         `json:"skipped"`
	Limits  []limitJSON `json:"limits"`
	// Divergence is where the saved smallest run and the reference's,
	// on the same faults, first differ (matched by role).
	Divergence *history.Divergence `json:"divergence,omitempty"`
}

// divergenceOf is v's first divergence from the reference, or nil.
func divergenceOf(v labrun.Violation) *history.Divergence {
	d, ok := labrun.FirstDivergence(&v.History, &v.Reference)
	if !ok {
		return nil
	}
	j := &history.Divergence{Step: d.Index + 1, At: d.Mine.At, Replica: d.Mine.Replica, Kind: d.Mine.Kind, Yours: d.MineText, Reference: d.TheirsText}
	if d.Mine.Kind == "" && len(v.History.Events) > 0 {
		// The reference went on where the learner's run had no more
		// steps: the mark is at the learner's run's end.
		j.At = v.History.Events[len(v.History.Events)-1].At
	}
	return j
}

type limitJSON struct {
	Faults    []history.RequestFault `json:"faults"`
	Findings  []history.Finding      `json:"findings"`
	Reference []history.Finding      `json:"reference_findings"`
}

// cellResult is a grid cell as the report's sites say it.
var cellResult = map[labrun.Cell]string{labrun.CellHeld: history.CellHeld, labrun.CellViolated: history.CellViolated,
	labrun.CellLimit: history.CellBothFailed, labrun.CellNotReached: history.CellNotReached, labrun.CellNotTried: "not-tried",
	labrun.CellUnconfirmed: "unconfirmed"}

func writeExploreJSON(out io.Writer, rep *labrun.ExploreReport, saved string) {
	held := len(rep.Violations) == 0 && rep.Calm == nil
	r := history.Report{Kind: "verdict", FaultsFile: saved, Seconds: rep.Took.Seconds(), Violations: append([]history.Finding{}, rep.Calm...),
		VerdictRecord: history.VerdictRecord{Scenario: labrun.ScenarioName(rep.Lab), Showed: held, Outcome: history.OutcomeHeld, Rules: true}}
	for _, v := range rep.Violations {
		r.Violations = append(r.Violations, v.Findings...)
	}
	r.Summary = fmt.Sprintf("Held under every fault explored (%d runs).", rep.Runs)
	if !held {
		r.Outcome, r.Exit = history.OutcomeViolated, history.ExitViolation
		r.Summary = "Violated: " + findingNames(r.Violations)
	}
	for _, row := range rep.Grid {
		s := siteOf(row)
		for _, k := range history.FaultKinds() {
			s.Cells = append(s.Cells, cellOf(rep, row, k))
		}
		r.Sites = append(r.Sites, s)
	}
	j := exploreJSON{Report: r, Runs: rep.Runs, Planned: rep.Planned, Skipped: rep.Skipped, Limits: []limitJSON{}}
	if v, ok := picked(rep); ok {
		j.Divergence = divergenceOf(v)
	}
	for _, l := range rep.Limits {
		j.Limits = append(j.Limits, limitJSON{Faults: l.Faults, Findings: l.Learner, Reference: l.Reference})
	}
	b, _ := json.Marshal(j)
	fmt.Fprintln(out, string(b))
}

// cellOf is one cell of the report's grid, with what broke there.
func cellOf(rep *labrun.ExploreReport, row labrun.SiteRow, k history.FaultAt) history.Cell {
	c := history.Cell{Fault: string(k), Result: cellResult[row.Cells[k]]}
	for _, v := range rep.Violations {
		f := v.Faults[0]
		if f.Fault == k && f.Role == row.Role && f.Site.Key() == row.Site.Key() && len(v.Findings) > 0 {
			c.Property, c.Violation = v.Findings[0].Property, v.Findings[0].Violation
		}
	}
	return c
}

// printDivergence shows where the learner's smallest run and the
// reference's, on the same faults, first differ, matched by role.
func printDivergence(out io.Writer, v labrun.Violation) {
	d, ok := labrun.FirstDivergence(&v.History, &v.Reference)
	if !ok {
		return
	}
	fmt.Fprintf(out, "  first divergence from the reference (matched by role, step %d):\n", d.Index+1)
	fmt.Fprintf(out, "    %-36s | %s\n", "yours", "the reference")
	// Side by side, each wrapped in its column: where the two steps
	// differ (the revision a write landed at, the rule it broke) is
	// often at their end.
	a := strings.Split(ansi.Wordwrap(d.MineText, 36, " "), "\n")
	b := strings.Split(ansi.Wordwrap(d.TheirsText, 36, " "), "\n")
	for i := range max(len(a), len(b)) {
		var l, r string
		if i < len(a) {
			l = a[i]
		}
		if i < len(b) {
			r = b[i]
		}
		fmt.Fprintf(out, "    %-36s | %s\n", ansi.Truncate(l, 36, "…"), ansi.Truncate(r, 36, "…"))
	}
}
