package experiment

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// The store's view: what etcd holds for the experiment's keys, beside
// what each replica believes (its card). A replica's card shows the lease
// time it thinks it has; this shows etcd's: they part ways when a replica
// is paused, cut off or its clock runs slow.

// storeHeading starts the panel: what etcd holds, or held when the run
// ended (the run then deletes its keys).
func (m Model) storeHeading() string {
	if _, at, ok := m.storeAtCursor(); ok {
		return fmt.Sprintf("etcd at %.2fs", at.Seconds())
	}
	if m.phase == phaseDone {
		return "etcd held"
	}
	return "etcd holds"
}

// storeAtCursor is what etcd held at the timeline's cursor, by the run's
// watch, when the cursor is not following the run.
func (m Model) storeAtCursor() (experiment.StoreState, time.Duration, bool) {
	if m.isLive() || (m.phase != phaseRunning && m.phase != phaseDone) {
		return experiment.StoreState{}, 0, false
	}
	rev, keys, at, ok := m.timeline().Held()
	if !ok {
		return experiment.StoreState{}, 0, false
	}
	return experiment.StoreState{At: m.started.Add(at), Revision: rev, Keys: keys}, at, true
}

// store is what the store's view shows: etcd at the cursor, or the
// run's latest reading.
func (m Model) store() experiment.StoreState {
	if s, _, ok := m.storeAtCursor(); ok {
		return s
	}
	return m.snap.store
}

// storeBesideMin is the narrowest the panel may be to stand beside the
// replica cards rather than under them.
const storeBesideMin = 46

// storeLines describes what etcd holds in at most n lines of width w.
func (m Model) storeLines(w, n int) []string {
	st := m.Styles
	if n <= 0 || w <= 0 {
		return nil
	}
	s := m.store()
	var status string
	switch {
	case m.phase == phaseStarting:
		status = "starting…"
	case m.phase != phaseRunning && m.phase != phaseDone:
		status = "(no run yet)"
	case s.At.IsZero() && s.Err == "":
		status = "reading…"
	case len(s.Keys) == 0 && s.Err == "":
		status = "(no key)"
	}
	if status != "" {
		return []string{st.Muted.Render(ansi.Truncate(status, w, "…"))}
	}
	var out []string
	if s.Err != "" {
		out = append(out, st.Warning.Render(ansi.Truncate(s.Err, w, "…")))
	}
	groups := s.Groups()
	room := max(n-len(out), 1)
	if len(groups) > room {
		groups = latestGroups(groups, room)
	}
	// Every group gets a line; lines to spare go to the first groups that
	// want more.
	spare := room - len(groups)
	for _, g := range groups {
		parts := m.groupParts(g, s)
		extra := min(len(pack(parts, w, 0))-1, spare)
		spare -= extra
		for _, l := range pack(parts, w, 1+extra) {
			out = append(out, st.Text.Render(l))
		}
	}
	if s.More > 0 {
		out = append(out, st.Muted.Render(fmt.Sprintf("and %d more keys", s.More)))
	}
	if len(s.Keys) == 0 {
		out = append(out, st.Muted.Render("(no key)"))
	}
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// latestGroups keeps the n groups last written to, in their own order.
func latestGroups(gs []experiment.StoreGroup, n int) []experiment.StoreGroup {
	idx := make([]int, len(gs))
	last := make([]int64, len(gs))
	for i, g := range gs {
		idx[i] = i
		for _, k := range g.Keys {
			last[i] = max(last[i], k.ModRevision)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return last[idx[a]] > last[idx[b]] })
	idx = idx[:n]
	sort.Ints(idx)
	out := make([]experiment.StoreGroup, n)
	for i, j := range idx {
		out[i] = gs[j]
	}
	return out
}

// groupParts describes a group as the pieces of a line, most telling
// first, so a narrow screen cuts the least telling.
func (m Model) groupParts(g experiment.StoreGroup, s experiment.StoreState) []string {
	if g.Dir == "" || len(g.Keys) == 1 {
		k := g.Keys[0]
		return []string{fmt.Sprintf("%s = %s", k.Key, k.Value), m.leasePart(k.Lease, s),
			fmt.Sprintf("create %d", k.CreateRevision), fmt.Sprintf("mod %d", k.ModRevision), fmt.Sprintf("version %d", k.Version)}
	}
	if g.Distinct() {
		// A queue: every contender names itself; the oldest holds it.
		head := g.Keys[0]
		parts := []string{fmt.Sprintf("%s %d keys", g.Dir, len(g.Keys)),
			fmt.Sprintf("oldest %s (create %d)", head.Value, head.CreateRevision), m.leasePart(head.Lease, s)}
		var next []string
		for _, k := range g.Keys[1:] {
			next = append(next, fmt.Sprintf("%s (%d)", k.Value, k.CreateRevision))
		}
		if len(next) > 0 {
			parts = append(parts, "then "+strings.Join(next, ", "))
		}
		return parts
	}
	values, counts := g.Owners()
	parts := []string{fmt.Sprintf("%s %d keys by value", g.Dir, len(g.Keys))}
	for _, v := range values {
		parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
	}
	return parts
}

// leasePart is a key's lease and, when etcd was asked, its TTL and the
// time it has left, counting down between readings while a run is on.
func (m Model) leasePart(id int64, s experiment.StoreState) string {
	if id == 0 {
		return "no lease"
	}
	name := fmt.Sprintf("lease …%04x", uint64(id)&0xffff)
	l, ok := s.Leases[id]
	switch {
	case !ok:
		return name
	case l.Gone:
		return name + " expired"
	}
	left := l.Left
	if m.phase == phaseRunning && l.Precise {
		left -= m.now().Sub(s.At)
	}
	var leftText string
	switch {
	case l.Precise && left <= 0:
		leftText = "expiring" // etcd deletes it on its next pass
	case l.Precise:
		leftText = history.LeftLabel(left)
	case left < time.Second:
		leftText = "under 1s left"
	default:
		// etcd answers in whole seconds, rounded down.
		sec := int64(left / time.Second)
		leftText = fmt.Sprintf("%d–%ds left", sec, sec+1)
	}
	return fmt.Sprintf("%s %s, %s", name, history.TTLLabel(l.GrantedTTL), leftText)
}

// pack joins parts with " · " into lines of width w, at most limit of
// them (0: as many as it takes). A part that fits nowhere is left out and
// the line ends with "…"; a part too wide for a line of its own is cut.
func pack(parts []string, w, limit int) []string {
	var out []string
	line, left := "", false
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case ansi.StringWidth(line)+3+ansi.StringWidth(p) <= w:
			line += " · " + p
		case limit == 0 || len(out)+1 < limit:
			out = append(out, ansi.Truncate(line, w, "…"))
			line = "  " + p
		default:
			left = true
		}
	}
	if left && ansi.StringWidth(line)+2 <= w {
		line += " …"
	}
	if line != "" {
		out = append(out, ansi.Truncate(line, w, "…"))
	}
	return out
}

// storeRows is how many lines the panel may take under the cards.
func storeRows(h int) int {
	switch {
	case h <= 24:
		return 2
	case h <= 34:
		return 3
	}
	return 4
}

// cardsAndStore draws the replica cards with the store's view beside them
// when it fits, else under them.
func (m Model) cardsAndStore(w, h int) []string {
	st := m.Styles
	cards := m.cards(w)
	cardsW := 0
	for _, l := range cards {
		cardsW = max(cardsW, ansi.StringWidth(l))
	}
	if side := w - cardsW - 1; len(cards) >= 5 && side >= storeBesideMin {
		inner := side - 4
		rows := len(cards) - 3 // the box's border and its heading
		lines := append([]string{st.Heading.Render(m.storeHeading()) + st.Muted.Render(m.storeRevision())}, m.storeLines(inner, rows)...)
		for len(lines) < rows+1 {
			lines = append(lines, "")
		}
		box := st.Box.Width(side).Render(strings.Join(lines, "\n"))
		return strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, strings.Join(cards, "\n"), " ", box), "\n")
	}
	return append(cards, m.storeRowsAt(w, storeRows(h))...)
}

// storeRowsAt is the store's view under the cards, in at most rows lines.
func (m Model) storeRowsAt(w, rows int) []string {
	st := m.Styles
	indent := len(m.storeHeading()) + 1
	lines := m.storeLines(w-indent, rows)
	for i, l := range lines {
		prefix := strings.Repeat(" ", indent)
		if i == 0 {
			prefix = st.Heading.Render(m.storeHeading()) + " "
		}
		lines[i] = prefix + l
	}
	return lines
}

// storeRevision is the revision of the last reading, for the panel's
// heading.
func (m Model) storeRevision() string {
	if s := m.store(); !s.At.IsZero() && s.Revision > 0 {
		return fmt.Sprintf(" · revision %d", s.Revision)
	}
	return ""
}
