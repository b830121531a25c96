package faults

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// exploredRun is an ended exploration as the view gets it: the saved
// smallest run and explore's report line with n grid rows and a
// divergence at r2's refused write.
func exploredRun(t *testing.T, n int) (*Model, *faultRun) {
	t.Helper()
	events := []history.Event{
		{At: 100 * time.Millisecond, Kind: history.Acquired, Replica: "r1", Token: 5},
		{At: 900 * time.Millisecond, Kind: history.Paused, Replica: "r1", Origin: history.ByScript},
		{At: 1500 * time.Millisecond, Kind: history.Acquired, Replica: "r2", Token: 8},
		{At: 2500 * time.Millisecond, Kind: history.WriteRejected, Replica: "r2", Token: 8, Text: "refused"},
		{At: 3000 * time.Millisecond, Kind: history.Resumed, Replica: "r1", Origin: history.ByScript},
		{At: 3100 * time.Millisecond, Kind: history.WriteAccepted, Replica: "r1", Token: 5},
	}
	h := history.History{Scenario: "lab-06_fenced_write", Events: events, Verdict: &history.Verdict{Findings: []history.Finding{
		{Property: "stale-write-refused", Violation: "stale-write", At: 3100 * time.Millisecond, Timed: true, Replicas: []string{"r1"}, Text: "stale-write at 3.10 s: etcd took r1's write with token 5"}}}}
	var sites []history.Site
	for i := range n {
		s := history.Site{Role: "owner", Where: fmt.Sprintf("labs/06_fenced_write/fenced.go:%d", 30+i), RPC: "Txn"}
		for _, k := range history.FaultKinds() {
			res := history.CellHeld
			if i == 1 && k == history.PauseAfter {
				res = history.CellViolated
			}
			s.Cells = append(s.Cells, history.Cell{Fault: string(k), Result: res})
		}
		sites = append(sites, s)
	}
	line, _ := json.Marshal(map[string]any{"kind": "verdict", "sites": sites, "runs": 12, "planned": 40,
		"divergence": history.Divergence{Step: 3, At: 2500 * time.Millisecond, Replica: "r2", Kind: history.WriteRejected,
			Yours: "2.50s owner 2 (r2) refused", Reference: "2.40s owner 2 (r3) write-accepted"}})
	x := parseExplore(line)
	if x == nil {
		t.Fatal("explore's report line was not read")
	}
	m := New(Options{Lab: "06_fenced_write", Root: t.TempDir()}, theme.NewStyles(true, true))
	m.SetSize(80, 19) // the lab screen's at 80x24
	m.seq = 1
	m.runs[0] = &faultRun{schedule: exploreEntry, started: time.Now()}
	m.faultDone(faultDoneMsg{seq: 1, code: history.ExitViolation, history: &h, explore: x})
	return &m, m.runs[0]
}

func press(m *Model, k string) tea.Cmd {
	code := map[string]rune{"tab": tea.KeyTab, "enter": tea.KeyEnter, "down": tea.KeyDown, "up": tea.KeyUp}[k]
	return m.faultsKey(tea.KeyPressMsg{Code: code})
}

// TestExploreGridFitsAndScrolls: the grid (call sites down, fault kinds
// across) fits 80 columns and the view's lines, and scrolls to its last
// row; the violated cell is marked.
func TestExploreGridFitsAndScrolls(t *testing.T) {
	m, r := exploredRun(t, 30)
	view := ansi.Strip(m.View())
	lines := strings.Split(view, "\n")
	if len(lines) > 19 {
		t.Fatalf("the view has %d lines, the lab screen gives it 19", len(lines))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("a line wider than 80: %q", l)
		}
	}
	for _, want := range []string{"fenced.go: line, RPC, role", "fail", "leader", "sever", "stop", "refuse", "revoke", "31 Txn owner", "VIOL", "sites 1-"} {
		if !strings.Contains(view, want) {
			t.Errorf("the grid lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "59 Txn owner") {
		t.Fatalf("the last row shows before scrolling:\n%s", view)
	}
	for range 40 {
		press(m, "down")
	}
	// The keys keep the grid's first row within its last, without a
	// View in between: drawing changes nothing.
	if top := r.explore.top; top != m.gridLastTop(r) || top < 1 || top >= 29 {
		t.Fatalf("after 40 keys down the grid's first row is %d, want its last first row (%d)", top, m.gridLastTop(r))
	}
	view = ansi.Strip(m.View())
	if !strings.Contains(view, "59 Txn owner") || !strings.Contains(view, "of 30") {
		t.Fatalf("scrolled down, the last row is not shown:\n%s", view)
	}
	if strings.Count(view, "\n")+1 > 19 {
		t.Fatal("scrolled, the view outgrew its height")
	}
	press(m, "up") // past the end, one key up moves the grid at once
	if view = ansi.Strip(m.View()); strings.Contains(view, "59 Txn owner") {
		t.Fatalf("one key up after scrolling past the end left the last row on screen:\n%s", view)
	}
}

// TestExploreDivergenceMarkedAndReplayed: tab shows the timeline with
// the cursor on the first divergence, marked as an item of its own and
// said side by side; enter replays the run from its start, a step a
// tick, and stops on the divergence.
func TestExploreDivergenceMarkedAndReplayed(t *testing.T) {
	m, r := exploredRun(t, 2)
	press(m, "tab")
	view := ansi.Strip(m.View())
	for _, want := range []string{"First divergence from the reference, step 3", "yours:     2.50s owner 2 (r2) refused", "reference: 2.40s owner 2 (r3)"} {
		if !strings.Contains(view, want) {
			t.Errorf("the divergence view lacks %q:\n%s", want, view)
		}
	}
	mark := r.explore.mark
	if mark < 0 || r.view.Cursor() != mark {
		t.Fatalf("the cursor is on item %d, the divergence's mark on %d", r.view.Cursor(), mark)
	}
	if e, _ := r.view.Event(mark); !strings.HasPrefix(e.Text, divergenceMark) || e.Replica != "r2" || e.At != 2500*time.Millisecond {
		t.Fatalf("the mark is %+v", e)
	}
	if len(r.history.Events) != 6 {
		t.Fatal("the recorded history was changed by the mark")
	}
	if cmd := press(m, "enter"); cmd == nil || r.view.Cursor() != 0 || !r.explore.replaying {
		t.Fatalf("enter: cursor %d, replaying %v, want a replay from item 0", r.view.Cursor(), r.explore.replaying)
	}
	steps := 0
	for m.exploreStep(exploreStepMsg{seq: m.seq}) != nil {
		steps++
		if steps > 50 {
			t.Fatal("the replay does not stop")
		}
	}
	if r.view.Cursor() != mark || r.explore.replaying || steps != mark {
		t.Fatalf("the replay stopped at item %d after %d steps (replaying %v), want the mark %d", r.view.Cursor(), steps, r.explore.replaying, mark)
	}
	if !strings.Contains(ansi.Strip(m.View()), "enter replay") {
		t.Error("after the replay the help does not offer it again")
	}
}

// TestExploreLineOfARunIsNoExploration: a lab run's verdict line (no
// grid, no divergence) is not read as an exploration's.
func TestExploreLineOfARunIsNoExploration(t *testing.T) {
	if x := parseExplore([]byte(`{"kind":"verdict","showed":true,"summary":"Held."}`)); x != nil {
		t.Fatalf("a run's verdict read as an exploration: %+v", x)
	}
}

// TestExploreWithoutReportOffersNoReference: an exploration that ended
// with no report (the lab not written yet, exit 2) offers no r in its
// help, since r does nothing after an exploration.
func TestExploreWithoutReportOffersNoReference(t *testing.T) {
	m := New(Options{Lab: "05_etcd_lock", Root: t.TempDir()}, theme.NewStyles(true, true))
	m.SetSize(80, 19)
	m.seq = 1
	m.runs[0] = &faultRun{schedule: exploreEntry, started: time.Now()}
	m.faultDone(faultDoneMsg{seq: 1, code: history.ExitCouldNotRun})
	if help := helpLine(&m); strings.Contains(help, "reference") || !strings.Contains(help, "schedules") {
		t.Fatalf("the help after an exploration with no report: %s", help)
	}
}

// TestDivergenceStepsWrapOnTwoLines: a step too long for one line goes
// on over a second, indented under its text, so that its end (the
// revision the write landed at) shows at 80 columns.
func TestDivergenceStepsWrapOnTwoLines(t *testing.T) {
	step := `7.08s owner 1 (r1) write-accepted, broke stale-write: Write "r1 token 2 write 1" with token 2 returned revision 62`
	lines := wrapTwo("  yours:     ", step, 80)
	if len(lines) != 2 || !strings.HasPrefix(lines[1], strings.Repeat(" ", 13)) || !strings.Contains(lines[1], "returned revision 62") {
		t.Fatalf("wrapped as %q", lines)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("a line wider than 80: %q", l)
		}
	}
	if got := wrapTwo("  yours:     ", "2.50s owner 2 (r2) refused", 80); len(got) != 1 {
		t.Errorf("a short step took %d lines", len(got))
	}
}
