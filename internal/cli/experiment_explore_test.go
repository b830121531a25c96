package cli

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

func TestExploreUsage(t *testing.T) {
	for _, args := range [][]string{
		{"experiment", "explore"},
		{"experiment", "explore", "--lab", "99"},
		{"experiment", "explore", "--lab", "06", "extra"},
		{"experiment", "explore", "--lab", "06", "--budget", "0s"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if strings.TrimSpace(stderr) == "" {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}

// TestExploreReportSaysWhatWasFound: the text report names the violation,
// the faults and the replay command, and the grid marks the cell; a held
// exploration with runs left untried says so rather than only "held".
func TestExploreReportSaysWhatWasFound(t *testing.T) {
	site := history.CallSite{File: "labs/06_fenced_write/fenced.go", Line: 38, Func: "Write", Entry: "Write", RPC: "Txn"}
	f := history.RequestFault{ID: 1, Fault: history.PauseAfter, Role: "owner", Site: site, Occurrence: 1}
	row := labrun.SiteRow{Site: site, Role: "owner", Cells: map[history.FaultAt]labrun.Cell{}}
	for _, k := range history.FaultKinds() {
		row.Cells[k] = labrun.CellHeld
	}
	row.Cells[history.PauseAfter] = labrun.CellViolated
	finding := history.Finding{Property: "stale-write-refused", Violation: "stale-write", Text: "stale-write at 5.48 s: etcd took r1's write with token 2"}
	// A keep-alive of the newcomer's: the longest RPC and role a row names.
	long := labrun.SiteRow{Site: history.CallSite{File: "labs/06_fenced_write/fenced.go", Line: 103, Func: "keep", Entry: "Write", RPC: "LeaseKeepAlive"},
		Role: "newcomer", Cells: row.Cells}
	rep := &labrun.ExploreReport{Lab: "06_fenced_write", Grid: []labrun.SiteRow{row, long}, Runs: 9, Planned: 12, Took: time.Minute,
		Violations: []labrun.Violation{{Faults: []history.RequestFault{f}, Findings: []history.Finding{finding}, Confirmed: true, Again: 5, Tries: 6}}}
	l, _ := labrun.Find("06")
	var b strings.Builder
	printExplore(&b, l, rep, "/tmp/x.json")
	out := b.String()
	t.Log("\n" + out)
	title := strings.Index(out, "fenced.go: line, RPC, role")
	if title < 0 {
		t.Fatalf("the grid's heading does not name the one file its sites are in:\n%s", out)
	}
	grid := out[title:]
	for i, line := range strings.Split(grid[:strings.Index(grid, "\n\n")], "\n") {
		if utf8.RuneCountInString(line) > 80 {
			t.Errorf("line %d of the grid is %d columns wide, more than 80: %q", i+1, utf8.RuneCountInString(line), line)
		}
	}
	for _, want := range []string{"VIOL", "pause the replica after the owner's 1st request from fenced.go:38 Txn (Write)", "Stale-write at 5.48 s", "--faults /tmp/x.json", "confirmed: its smallest run broke it again in 5 of 6 reruns", "38 Txn owner", "103 LeaseKeepAlive newcomer", "the reference, under the same faults: not run", "fenced.go:38 Write"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	rep.Violations = nil
	rep.Skipped = 5 // planned, left out by the budget
	row.Cells[history.PauseAfter] = labrun.CellNotTried
	b.Reset()
	printExplore(&b, l, rep, "")
	if out := b.String(); !strings.Contains(out, "5 planned runs were not tried") {
		t.Errorf("a held exploration with runs left does not say so:\n%s", out)
	}
}

// TestExploreDivergenceSideBySideWhole: the two steps where the runs
// first differ are printed side by side, each wrapped in its column, so
// that their ends (the revision each write landed at) are not cut, in
// 80 columns.
func TestExploreDivergenceSideBySideWhole(t *testing.T) {
	ev := func(s float64, k history.Kind, r, text string) history.Event {
		return history.Event{At: time.Duration(s * float64(time.Second)), Kind: k, Replica: r, Text: text}
	}
	stale := ev(7.08, history.WriteAccepted, "r1", `Write "r1 token 2 write 1" with token 2 returned revision 62`)
	v := labrun.Violation{
		History: history.History{Events: []history.Event{ev(0.04, history.Acquired, "r1", "took the lock"), ev(0.05, history.Paused, "r1", "paused"), stale},
			Verdict: &history.Verdict{Findings: []history.Finding{{Property: "stale-write-refused", Violation: "stale-write", Events: []history.Event{stale}}}}},
		Reference: history.History{Events: []history.Event{ev(0.04, history.Acquired, "r2", "took the lock"), ev(0.05, history.Paused, "r2", "paused"),
			ev(7.06, history.WriteAccepted, "r2", `Write "r2 token 2 write 1" with token 2 returned revision 3`)}, Verdict: &history.Verdict{Showed: true}},
	}
	var b strings.Builder
	printDivergence(&b, v)
	out := b.String()
	t.Log("\n" + out)
	// Each column read down, its lines joined again.
	var yours, theirs []string
	for _, l := range strings.Split(out, "\n") {
		if a, b, ok := strings.Cut(l, " | "); ok {
			yours, theirs = append(yours, strings.TrimSpace(a)), append(theirs, strings.TrimSpace(b))
		}
	}
	join := func(ls []string) string { return strings.ReplaceAll(strings.Join(ls, " "), "- ", "-") }
	if !strings.Contains(out, "step 3") || !strings.Contains(join(yours), "write-accepted, broke stale-write: Write \"r1 token 2 write 1\" with token 2 returned revision 62") || !strings.Contains(join(theirs), "returned revision 3") {
		t.Errorf("the divergence is not whole, side by side:\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if utf8.RuneCountInString(l) > 80 {
			t.Errorf("a line wider than 80: %q", l)
		}
	}
}

// TestExploreProgressAtItsTime: a progress line is a note at the time
// since the exploration began, so the lab screen's timeline spreads
// them out instead of stacking them at 0.000 s.
func TestExploreProgressAtItsTime(t *testing.T) {
	e := progressEvent("06_fenced_write", labrun.ExploreProgress{Done: 3, Planned: 40, Covered: 2, Sites: 5, Last: "held"}, 12500*time.Millisecond)
	if e.At != 12500*time.Millisecond || e.Kind != history.Note || e.Value != 3 {
		t.Errorf("progress event at %v, kind %s, value %v; want a note at 12.5 s, 3 runs", e.At, e.Kind, e.Value)
	}
	if want := "explore 06_fenced_write: 3 of 40 runs, 2 of 5 call sites covered; held"; e.Text != want {
		t.Errorf("text %q, want %q", e.Text, want)
	}
}
