package timeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/text"
)

// The timeline panel: a heading, the lanes with the ruler, what happened
// at the cursor in full, and, where there is room, the items around the
// cursor one a line.

// foldNouns name what a fold counts, in the order a summary lists them.
var foldNouns = []struct {
	kind       history.Kind
	one, many  string
	ownerWrite bool
}{
	{history.WriteAccepted, "write accepted", "writes accepted", true},
	{history.LeaseRenewed, "lease renewal", "lease renewals", false},
	{history.LeaseGranted, "lease granted", "leases granted", false},
	{history.ShardClaimed, "shard claimed", "shards claimed", false},
	{history.KeyChanged, "etcd key change", "etcd key changes", false},
}

// foldText says what a folded item counts: "12 writes accepted from a1
// with token 2 · 9 lease renewals".
func foldText(f *fold) string {
	var parts []string
	for _, n := range foldNouns {
		c := f.counts[n.kind]
		if c == 0 {
			continue
		}
		noun := n.many
		if c == 1 {
			noun = n.one
		}
		p := fmt.Sprintf("%d %s", c, noun)
		if n.ownerWrite {
			p += fmt.Sprintf(" from %s with token %d", f.writer, f.token)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " · ")
}

// itemText is item i in words, with its time: a fold's counts over the
// time it spans, or the event with the replica it is about.
func (tl timeline) itemText(i int) string {
	it := tl.items[i]
	e := tl.events[it.first]
	if it.fold != nil {
		from, to := e.At.Seconds(), tl.at(i).Seconds()
		if it.first == it.last {
			return fmt.Sprintf("%.3fs  %s", from, foldText(it.fold))
		}
		return fmt.Sprintf("%.3f–%.3fs  %s", from, to, foldText(it.fold))
	}
	return fmt.Sprintf("%.3fs  %s", e.At.Seconds(), tl.eventWords(i))
}

// eventWords is the event of a single-event item in words, with the
// replica it is about and what only the timeline knows of it.
func (tl timeline) eventWords(i int) string {
	e := tl.events[tl.items[i].first]
	what := EventWords(e)
	if e.Kind.IsFault() && e.Origin == history.ByLearner {
		what += " (your key)"
	}
	if t := tl.truth[i]; t != "" {
		what += "; " + t // where the checker found two owners: etcd's side
	}
	return what
}

// EventWords is event e in words, after the replica it is about
// ("r3  refused: write 7 with token 2"). It is the one place that words
// an event, so that the lab screen's running view and this timeline say
// the same thing of the same event; each adds its own time column.
func EventWords(e history.Event) string {
	what := e.Text
	switch e.Kind {
	case history.Phase:
		what = fmt.Sprintf("step %d: %s", e.Step, e.Text)
	case history.InvariantViolated:
		what = "violation: " + e.Text
	case history.WriteRejected:
		what = "refused: " + e.Text
	}
	if e.Replica != "" {
		// "m2 reports term 2" after the name column read "m2  m2 reports".
		return e.Replica + "  " + strings.TrimPrefix(what, e.Replica+" ")
	}
	return what
}

// cursorLines is what happened at item cur in w cells: the item in full
// (a finding, a violation or a refusal, in up to three lines, anything
// else two) and, when it is a finding, every other finding of the same
// instant (two lines each), so that two at once are both on screen
// whichever the cursor is on (v steps to each).
func (tl timeline) cursorLines(cur, w int) []string {
	key := tl.keyItem(cur)
	out := text.ClampWords(tl.itemText(cur), w, 2+int(boolInt(key)))
	if !key {
		return out
	}
	for _, j := range tl.findingsWith(cur) {
		out = append(out, text.ClampWords("and at the same instant: "+tl.eventWords(j), w, 2)...)
	}
	return out
}

// findingsWith is the other findings that happened at the same instant
// as finding cur, in order.
func (tl timeline) findingsWith(cur int) []int {
	at := tl.events[tl.items[cur].first].At
	var out []int
	for j := range tl.items {
		if j != cur && tl.keyItem(j) && tl.events[tl.items[j].first].At == at {
			out = append(out, j)
		}
	}
	return out
}

// timelineHeading is the panel's first line: where the cursor is and the
// keys that move it.
func (m Model) timelineHeading(tl timeline, cur, w int) string {
	st := m.styles
	pos := fmt.Sprintf("%d/%d", cur+1, len(tl.items))
	end := "end: live"
	switch {
	case m.following():
		pos = "live"
	case m.run.Ended:
		// Nothing more will come: say so, and when it ended.
		end = "end: last"
		if at, ok := endedAt(m.run.Events); ok {
			pos += fmt.Sprintf(" · ended at %.3fs", at.Seconds())
		} else {
			pos += " · ended"
		}
	}
	v, r := tl.keyItems()
	var flags []string
	if v > 0 {
		flags = append(flags, plural(v, "violation", "violations"))
	}
	if r > 0 {
		flags = append(flags, plural(r, "refusal", "refusals"))
	}
	flag := ""
	if len(flags) > 0 {
		flag = " · ⚑ " + strings.Join(flags, ", ") + " (v)"
	}
	head := st.Heading.Render("timeline")
	return head + st.Muted.Render(text.FirstFit(w-len("timeline"),
		" "+pos+flag+" · ←/→ move · "+end,
		" "+pos+flag+" · ←/→",
		" "+pos+flag,
		" "+pos))
}

// endedAt is when the run ended: the time of its verdict, the last
// event, or of its last event when it has none.
func endedAt(events []history.Event) (time.Duration, bool) {
	if len(events) == 0 {
		return 0, false
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == history.Finished {
			return events[i].At, true
		}
	}
	return events[len(events)-1].At, true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// laneRows are the lanes in w cells for at most maxLanes replicas: the
// replicas that show something in the window (on a narrow screen, only
// those in the run at the cursor), those at the cursor first when there
// are more.
func (m Model) laneRows(tl timeline, cur, w, maxLanes int) []laneRow {
	labelW := labelWidth(w)
	cols := max(1, w-labelW-1)
	k := cellsPerItem(len(tl.items), cols)
	first, last := window(len(tl.items), cur, cols/k)
	var ls []int
	for l := range tl.lanes {
		if w < 110 && !atCursor(tl, l, cur) {
			continue // a narrow screen keeps to the replicas in the run then
		}
		for i := first; i < last; i++ {
			if s := tl.states[i][l]; s.seen && !s.gone {
				ls = append(ls, l)
				break
			}
		}
	}
	if len(ls) > maxLanes {
		sort.SliceStable(ls, func(a, b int) bool { return atCursor(tl, ls[a], cur) && !atCursor(tl, ls[b], cur) })
		ls = ls[:maxLanes]
		sort.Ints(ls)
	}
	var rows []laneRow
	for _, l := range ls {
		rows = append(rows, laneRow{label: m.replicaLabel(tl, l, cur, labelW), cells: replicaCells(tl, l, first, last, k)})
	}
	rows = append(rows, laneRow{label: m.etcdLabel(tl, cur, labelW), cells: etcdCells(tl, first, last, k)})
	rows = append(rows, laneRow{cells: rulerCells(tl, first, last, cur, k)})
	return rows
}

// atCursor reports whether lane l is in the run at item cur.
func atCursor(tl timeline, l, cur int) bool {
	s := tl.states[cur][l]
	return s.seen && !s.gone
}

// panel draws the timeline in at most n lines of w cells; detail is how
// many lines the text of the cursor's item may take.
func (m Model) panel(w, n, detail int) []string {
	st := m.styles
	tl := m.built()
	cur := m.cursorOf(tl)
	if n <= 0 {
		return nil
	}
	if cur < 0 {
		return []string{st.Heading.Render("timeline") + st.Muted.Render(" nothing yet")}
	}
	out := []string{m.timelineHeading(tl, cur, w)}
	lanes := max(1, n-3-detail)
	for _, l := range renderLanes(m.laneRows(tl, cur, w, lanes), w) {
		out = append(out, st.Text.Render(l))
	}
	style := st.Text
	if tl.keyItem(cur) {
		style = st.Error
	}
	lines := tl.cursorLines(cur, w)
	for _, l := range lines[:min(detail, len(lines))] {
		out = append(out, style.Render(l))
	}
	if rest := n - len(out); rest > 1 && len(tl.items) > 1 {
		out = append(out, m.itemList(tl, cur, w, rest)...)
	}
	return out
}

// itemList is the items around the cursor, one a line, the cursor's
// marked, in at most n lines; a legend first when there is room.
func (m Model) itemList(tl timeline, cur, w, n int) []string {
	st := m.styles
	var out []string
	if n >= 4 {
		forms := legend
		if tl.leaderMoves() {
			forms = legendMoves
		}
		out = append(out, st.Muted.Render(text.FirstFit(w, forms...)))
		n--
	}
	first := max(0, min(cur-n/2, len(tl.items)-n))
	for i := first; i < min(len(tl.items), first+n); i++ {
		mark := "  "
		if i == cur {
			mark = "▸ "
		}
		line := text.CutWords(mark+tl.itemText(i), w)
		switch {
		case tl.keyItem(i):
			line = st.Error.Render(line)
		case i == cur:
			line = st.Selected.Render(line)
		default:
			line = st.Muted.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// leaderMoves reports whether the timeline has a raft leader move.
func (tl timeline) leaderMoves() bool {
	for _, h := range tl.holds {
		if h.moved {
			return true
		}
	}
	return false
}
