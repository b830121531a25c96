package faults

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/sentence"
	"github.com/ownership-election/playground/internal/tui/text"
)

// exploreEntry is the last line of the schedule list: instead of one
// schedule, `playground experiment explore` (faults at every request the
// lab's code sends, judged against the reference on the same faults),
// its progress as the run's events. Once it ends, the view shows the
// coverage grid (call sites down, fault kinds across) and the saved run
// (the smallest failing one, or the calm run when all held) on the
// timeline, the first divergence from the reference marked there; enter
// replays that run step by step up to it.
const exploreEntry = "explore"

// listNames are the schedule list's lines: the prepared schedules, then
// exploration.
func listNames() []string { return append(labrun.ScheduleNames(), exploreEntry) }

// says is what a line of the list does.
func says(name string) string {
	if name == exploreEntry {
		return "faults at every request your code sends: one run per call site, fault (fail, lose, hold, pause, cut, leader, sever, stop, refuse, revoke) and role (owner, waiter, newcomer), about two minutes; a failure is rerun on the reference and shrunk; then the grid, and where your run first differs from the reference's"
	}
	return labrun.ScheduleSays(name)
}

// exploreView is what the view keeps of an ended exploration: its report
// (explore --json's last line: the grid, the first divergence) and where
// the learner is in it.
type exploreView struct {
	Sites      []history.Site      `json:"sites"`
	Divergence *history.Divergence `json:"divergence"`
	Runs       int                 `json:"runs"`
	Planned    int                 `json:"planned"`

	grid      bool // the grid is shown, else the timeline
	top       int  // the grid's first row shown
	mark      int  // the divergence's item on the timeline (-1: none)
	replaying bool // enter: the cursor steps on by itself
}

// parseExplore reads explore's report line; nil when the line is not
// one (a lab run's verdict has no grid).
func parseExplore(line []byte) *exploreView {
	var x exploreView
	if json.Unmarshal(line, &x) != nil || (len(x.Sites) == 0 && x.Divergence == nil) {
		return nil
	}
	x.grid, x.mark = true, -1
	return &x
}

// exploreKeys are the keys of an ended exploration.
var exploreKeys = struct{ Switch, Replay, Up, Down key.Binding }{
	Switch: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "grid/timeline")),
	Replay: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "replay to the divergence")),
	Up:     key.NewBinding(key.WithKeys("up", "k", "pgup")),
	Down:   key.NewBinding(key.WithKeys("down", "j", "pgdown")),
}

// exploreStepMsg moves a replay's cursor one item on.
type exploreStepMsg struct{ seq int }

// replayEvery is how long a replayed step stays before the next.
const replayEvery = 700 * time.Millisecond

// exploreDone sets up an ended exploration: the divergence marked on
// the saved run's timeline, the cursor on it.
func (m *Model) exploreDone(r *faultRun) {
	x := r.explore
	if x == nil || r.history == nil || x.Divergence == nil {
		return
	}
	d := x.Divergence
	h := markDivergence(*r.history, *d)
	if f, ok := h.Verdict.TimedViolation(); ok {
		h = markViolation(h, f)
	}
	v := m.finishedTimeline(h.Events, h.Scenario, d.At)
	for i := range v.Len() {
		if e, _ := v.Event(i); e.Kind == history.Note && strings.HasPrefix(e.Text, divergenceMark) {
			x.mark = i
			v.Seek(i)
			break
		}
	}
	r.view = v
}

// divergenceMark begins the note that marks the first divergence.
const divergenceMark = "◆ first divergence from the reference"

// markDivergence is h with a note at the divergence, on the lane of
// the learner's replica there.
func markDivergence(h history.History, d history.Divergence) history.History {
	i := slices.IndexFunc(h.Events, func(e history.Event) bool { return e.At > d.At })
	if i < 0 {
		i = len(h.Events)
	}
	note := history.Event{At: d.At, Kind: history.Note, Replica: d.Replica,
		Text: fmt.Sprintf("%s (step %d): yours %s; the reference %s", divergenceMark, d.Step, d.Yours, d.Reference)}
	h.Events = slices.Insert(slices.Clone(h.Events), i, note)
	return h
}

// exploreKey handles a key of an ended exploration: whether it did.
func (m *Model) exploreKey(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	r := m.runs[m.showing]
	if r == nil || !r.done || r.explore == nil {
		return false, nil
	}
	x := r.explore
	switch {
	case key.Matches(msg, exploreKeys.Switch):
		x.grid = !x.grid
	case key.Matches(msg, exploreKeys.Replay) && r.view != nil:
		x.grid = false
		if x.replaying {
			x.replaying = false
			return true, nil
		}
		x.replaying = true
		r.view.Seek(0)
		return true, m.replayTick()
	case x.grid && key.Matches(msg, exploreKeys.Up):
		x.top = max(0, min(x.top, m.gridLastTop(r))-1)
	case x.grid && key.Matches(msg, exploreKeys.Down):
		x.top = min(m.gridLastTop(r), x.top+1)
	default:
		x.replaying = false // a key of the timeline's own takes the cursor
		return false, nil
	}
	return true, nil
}

func (m *Model) replayTick() tea.Cmd {
	seq := m.seq
	return tea.Tick(replayEvery, func(time.Time) tea.Msg { return exploreStepMsg{seq: seq} })
}

// exploreStep moves a replay on one item, up to the divergence (or the
// run's end).
func (m *Model) exploreStep(msg exploreStepMsg) tea.Cmd {
	r := m.runs[m.showing]
	if msg.seq != m.seq || r == nil || r.explore == nil || !r.explore.replaying || r.view == nil {
		return nil
	}
	x := r.explore
	next := r.view.Cursor() + 1
	end := r.view.Len() - 1
	if x.mark >= 0 {
		end = x.mark
	}
	if next > end {
		x.replaying = false
		return nil
	}
	r.view.Seek(next)
	return m.replayTick()
}

// exploreLines draws an ended exploration: the verdict, then the grid
// or the first divergence over the timeline.
func (m Model) exploreLines(r *faultRun, w, h int) []string {
	st, x := m.styles, r.explore
	out := m.verdictLines(r, w)
	if x.grid {
		return append(out, m.gridLines(x, w, h-len(out))...)
	}
	if d := x.Divergence; d != nil {
		out = append(out, st.Heading.Render(ansi.Truncate(fmt.Sprintf("First divergence from the reference, step %d (matched by role):", d.Step), w, "…")))
		// Two lines each at most: where the two steps differ (the
		// revision a write landed at, the rule it broke) is often past
		// the first 80 columns.
		for _, l := range wrapTwo("  yours:     ", d.Yours, w) {
			out = append(out, st.Error.Render(l))
		}
		for _, l := range wrapTwo("  reference: ", d.Reference, w) {
			out = append(out, st.Success.Render(l))
		}
	} else {
		out = append(out, st.Muted.Render(ansi.Truncate("Your run and the reference's take the same steps (or none failed).", w, "…")))
	}
	help := "tab grid · enter replay step by step to the divergence · ←/→ step"
	if x.replaying {
		help = "replaying… enter pauses · tab grid"
	}
	out = append(out, st.Muted.Render(ansi.Truncate(help, w, "…")))
	if r.view != nil {
		v := *r.view
		v.SetSize(w, max(h-len(out), 3))
		out = append(out, strings.Split(v.View(), "\n")...)
	}
	return out
}

// verdictLines are an ended exploration's first lines.
func (m Model) verdictLines(r *faultRun, w int) []string {
	st := m.styles
	mark, style := "HELD under every fault tried", st.Success
	v := r.history.Verdict
	if r.code == history.ExitViolation || (v != nil && !v.Showed) {
		mark, style = "VIOLATION", st.Error
	}
	head := fmt.Sprintf("%s under explore (%d runs): %s", sentence.Capitalize(whose(r)), r.explore.Runs, mark)
	out := []string{style.Render(ansi.Truncate(head, w, "…"))}
	if v != nil && !v.Showed {
		for _, l := range clampLines(text.Wrap(violationText(v), w), 2, w) {
			out = append(out, st.Text.Render(l))
		}
	}
	return out
}

// gridLastTop is the grid's last first row, the one that shows its last
// site on the last line there is room for, at the screen's size: the
// keys scroll within it, so that one key up moves the grid at once after
// scrolling past its end.
func (m Model) gridLastTop(r *faultRun) int {
	w, h := m.width, m.height-len(m.verdictLines(r, m.width))
	title, _ := history.GridLabels(r.explore.Sites)
	return max(0, len(r.explore.Sites)-gridRows(w, h, title))
}

// gridLegend is what the grid's words mean, in w columns.
func gridLegend(w int) []string {
	return strings.Split(ansi.Wordwrap("held · VIOL a rule the reference keeps · both: the reference too · rare: not again nearly every time · - not reached · . not tried", w, " "), "\n")
}

// gridRows is how many sites the grid shows in w columns and h lines,
// besides its heading, its legend and the line that says where it is.
func gridRows(w, h int, title string) int {
	_, _, head := history.GridHeading(history.FaultKinds(), w, title)
	return max(h-len(head)-len(gridLegend(w))-1, 1)
}

// gridLines is the coverage grid: call sites down, fault kinds across,
// scrolled to fit h lines.
func (m Model) gridLines(x *exploreView, w, h int) []string {
	st := m.styles
	title, labels := history.GridLabels(x.Sites)
	width, siteW, head := history.GridHeading(history.FaultKinds(), w, title)
	out := make([]string, 0, h)
	for _, l := range head {
		out = append(out, st.Heading.Render(ansi.Truncate(l, w, "")))
	}
	legend := gridLegend(w)
	rows := gridRows(w, h, title)
	top := min(x.top, max(0, len(x.Sites)-rows))
	for j, s := range x.Sites[top:min(len(x.Sites), top+rows)] {
		line := st.Text.Render(fmt.Sprintf("%-*s", siteW, ansi.Truncate(labels[top+j], siteW-1, "…")))
		for i, c := range s.Cells {
			word, style := m.cellWord(c.Result)
			line += style.Render(fmt.Sprintf("%-*s", width(i), word))
		}
		out = append(out, line)
	}
	for _, l := range legend {
		out = append(out, st.Muted.Render(ansi.Truncate(l, w, "…")))
	}
	pos := fmt.Sprintf("sites %d-%d of %d · ↑/↓ scroll · tab timeline · enter replay", top+1, min(len(x.Sites), top+rows), len(x.Sites))
	return append(out, st.Muted.Render(ansi.Truncate(pos, w, "…")))
}

// cellWord is how a cell's result is written, and in what style.
func (m Model) cellWord(result string) (string, lipgloss.Style) {
	st := m.styles
	switch result {
	case history.CellHeld:
		return "held", st.Success
	case history.CellViolated:
		return "VIOL", st.Error
	case history.CellBothFailed:
		return "both", st.Warning
	case history.CellNotReached:
		return "-", st.Muted
	case "unconfirmed": // explore's CellUnconfirmed: not broken again nearly every time, not counted
		return "rare", st.Warning
	}
	return ".", st.Muted
}

// wrapTwo writes text after label in w columns, on two lines at most,
// the second indented under the first's text and cut if it runs on.
func wrapTwo(label, text string, w int) []string {
	indent := strings.Repeat(" ", len(label))
	lines := strings.Split(ansi.Wordwrap(text, max(w-len(label), 10), " "), "\n")
	out := []string{ansi.Truncate(label+lines[0], w, "…")}
	if len(lines) > 1 {
		out = append(out, ansi.Truncate(indent+strings.Join(lines[1:], " "), w, "…"))
	}
	return out
}
