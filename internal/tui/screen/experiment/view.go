package experiment

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/tui/text"
)

const cardWidth = 19

// View draws the screen in the size given by SetSize.
func (m Model) View() string {
	w, h := max(m.Width, 40), max(m.Height, 12)
	st := m.Styles
	if m.sc == nil {
		return st.Error.Render(text.Wrap(m.err.Error(), w))
	}
	if v := m.sharedView(w); v != "" {
		return v
	}
	var top []string
	top = append(top, st.Muted.Render(text.Truncate("Runs on "+m.on, w)))
	top = append(top, ansi.Truncate(st.Title.Render("Experiment: "+m.sc.Name)+st.Muted.Render(" · "+m.sc.Title), w, "…"))
	for _, l := range text.Clamp(m.sc.Summary, w, 2) {
		top = append(top, st.Subtitle.Render(l))
	}
	top = append(top, ansi.Truncate(m.statusLine(), w, "…"))
	if m.phase != phasePredict {
		top = append(top, m.cardsAndStore(w, h)...)
	}
	if m.sc.Resource {
		top = append(top, ansi.Truncate(m.resourceLine(), w, "…"))
	}
	if m.notice != "" {
		top = append(top, st.Warning.Render(ansi.Truncate(m.notice, w, "…")))
	} else if s := m.stalled(w); s != "" {
		for _, l := range text.Clamp(s, w, 2) {
			top = append(top, st.Warning.Render(l))
		}
	}
	if m.err != nil {
		for _, l := range text.Clamp("error: "+m.err.Error(), w, 3) {
			top = append(top, st.Error.Render(l))
		}
	}
	rest := h - len(top)
	var bottom []string
	switch m.phase {
	case phasePredict:
		bottom = m.predictPanel(w, rest)
	case phaseDone:
		// The verdict comes first; the timeline keeps at least its
		// heading and the run's key event (pinned) or its last line.
		result := m.resultPanel(w, rest-2)
		bottom = append(m.timeline(w, rest-len(result)), result...)
	default:
		bottom = m.timeline(w, rest)
	}
	lines := append(top, bottom...)
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

func (m Model) statusLine() string {
	st := m.Styles
	state := map[phase]string{phasePredict: "predict first", phaseReady: "ready: enter runs it",
		phaseStarting: "starting etcd and replicas…", phaseRunning: "running", phaseDone: "finished: enter runs it again"}[m.phase]
	if m.phase == phaseRunning {
		state = fmt.Sprintf("running %.1fs", m.now().Sub(m.started).Seconds())
		switch {
		case !m.auto():
			state += " · step mode"
			if m.snap.atStep {
				state += ": space for the next step"
			}
		case m.snap.atStep:
			state += fmt.Sprintf(" · next step in %.0f s", math.Ceil(m.nextStepIn().Seconds()))
		}
	}
	parts := []string{experiment.TTLLabel(m.params.TTL)}
	if m.sc.Name == "fencing" {
		parts = append(parts, "fencing "+variant(m.params.Fencing))
	}
	if m.sc.Name == "ttl-unlock-bug" {
		parts = append(parts, "versioned unlock "+variant(m.params.VersionedUnlock))
	}
	if m.phase != phaseRunning && m.params.Step {
		parts = append(parts, "step mode")
	}
	return st.Accent.Render(state) + st.Muted.Render(" · "+strings.Join(parts, " · ")+" · faults: "+m.sc.Faults)
}

func variant(b *bool) string {
	switch {
	case b == nil:
		return "off then on"
	case *b:
		return "on"
	default:
		return "off"
	}
}

// cards draws the replicas side by side, as many as fit on one row.
func (m Model) cards(w int) []string {
	rs := m.snap.replicas
	if len(rs) == 0 {
		return nil
	}
	fit := max(1, w/(cardWidth+1))
	first := 0
	if m.sel >= fit {
		first = m.sel - fit + 1
	}
	last := min(len(rs), first+fit)
	var boxes []string
	for i := first; i < last; i++ {
		boxes = append(boxes, m.card(rs[i], i == m.sel))
	}
	row := lipgloss.JoinHorizontal(lipgloss.Top, boxes...)
	out := strings.Split(row, "\n")
	if hidden := len(rs) - (last - first); hidden > 0 {
		more := fmt.Sprintf("%d more replicas: ←/→ to scroll", hidden)
		if hidden == 1 {
			more = "1 more replica: ←/→ to scroll"
		}
		out = append(out, m.Styles.Muted.Render(more))
	}
	return out
}

func (m Model) card(r experiment.ReplicaState, selected bool) string {
	st := m.Styles
	name := r.Name
	if selected {
		name = st.Selected.Render("▸" + r.Name)
	} else {
		name = st.Accent.Render(" " + r.Name)
	}
	role := string(r.Role)
	switch {
	case r.Crashed:
		role = st.Error.Render(role)
	case r.Role == experiment.RoleOwner:
		role = st.Success.Render(role)
	default:
		role = st.Text.Render(role)
	}
	line1 := name + " " + role
	tok := "token -"
	if r.Token > 0 {
		tok = fmt.Sprintf("token %d", r.Token)
	}
	var flags []string
	if r.Paused {
		flags = append(flags, "PAUSED")
	}
	if r.Partitioned {
		flags = append(flags, "CUT")
	}
	if r.ClockRate != 0 && r.ClockRate != 1 {
		flags = append(flags, fmt.Sprintf("clk%.1fx", r.ClockRate))
	}
	line2 := st.Muted.Render(tok)
	if len(flags) > 0 {
		line2 += " " + st.Warning.Render(strings.Join(flags, " "))
	}
	line3 := st.Muted.Render("no lease")
	if r.LeaseTTL > 0 {
		line3 = bar(r.LeaseLeft, time.Duration(r.LeaseTTL)*time.Second, 5) + " " + experiment.LeftLabel(r.LeaseLeft)
	}
	inner := cardWidth - 4
	body := strings.Join([]string{ansi.Truncate(line1, inner, ""), ansi.Truncate(line2, inner, ""), ansi.Truncate(line3, inner, "")}, "\n")
	return st.Box.Width(cardWidth).Render(body)
}

// bar draws the time left of a lease as a draining bar.
func bar(left, ttl time.Duration, width int) string {
	if ttl <= 0 {
		return strings.Repeat("░", width)
	}
	n := int(float64(width)*float64(left)/float64(ttl) + 0.5)
	n = min(max(n, 0), width)
	return strings.Repeat("█", n) + strings.Repeat("░", width-n)
}

func (m Model) resourceLine() string {
	st := m.Styles
	if m.phase == phasePredict || m.phase == phaseReady || m.phase == phaseStarting {
		return st.Muted.Render("resource: (not running)")
	}
	r := m.snap.resource
	value := "(empty)"
	if r.Writer != "" {
		value = fmt.Sprintf("%q by %s", r.Value, r.Writer)
	}
	rej := fmt.Sprintf("rejected %d", r.Rejected)
	if r.Rejected > 0 {
		rej = st.Warning.Render(rej)
	}
	// Tokens and the fencing switch mean something only in the experiment
	// about fencing; elsewhere they read as a feature that is off.
	fencing := ""
	if m.sc.Name == "fencing" {
		fencing = fmt.Sprintf(" fencing %s · highest %d ·", onOff(r.Fencing), r.Highest)
	}
	return st.Heading.Render("resource") + st.Text.Render(fmt.Sprintf("%s %s · accepted %d · ", fencing, value, r.Accepted)) + rej
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// keyEvent reports whether an event is one the run exists to show: an
// invariant broken (two owners, a stale write accepted) or a stale write
// refused.
func keyEvent(e experiment.Event) bool {
	return e.Kind == experiment.InvariantViolated || e.Kind == experiment.WriteRejected
}

// timeline draws the last events that fit in n lines (lease renewals are
// left out: there are several a second). Two lines stay pinned under the
// heading when later lines push them out of view: the latest key event,
// so a violation never scrolls away unseen, and in step mode the step the
// script waits to take.
func (m Model) timeline(w, n int) []string {
	st := m.Styles
	var evs []experiment.Event
	keys, lastKey, lastPhase := 0, -1, -1
	for _, e := range m.snap.events {
		if e.Kind == experiment.LeaseRenewed || e.Kind == experiment.Finished || e.Kind == experiment.Waiting {
			continue
		}
		if keyEvent(e) {
			keys, lastKey = keys+1, len(evs)
		}
		if e.Kind == experiment.Phase {
			lastPhase = len(evs)
		}
		evs = append(evs, e)
	}
	if n <= 0 {
		return nil
	}
	type pin struct {
		at     int // index in evs
		line   string
		pinned bool
	}
	var pins []*pin
	if lastKey >= 0 {
		head := "⚑ "
		if keys > 1 {
			head = fmt.Sprintf("⚑ latest of %d: ", keys)
		}
		pins = append(pins, &pin{at: lastKey, line: st.Error.Render(ansi.Truncate(head+strings.TrimLeft(evs[lastKey].String(), " "), w, "…"))})
	}
	if m.phase == phaseRunning && m.snap.atStep && lastPhase >= 0 {
		pins = append(pins, &pin{at: lastPhase, line: st.Accent.Render(ansi.Truncate("▶ next step (space): "+evs[lastPhase].Text, w, "…"))})
	}
	if n == 1 {
		if len(pins) > 0 {
			return []string{pins[0].line}
		}
		return nil
	}
	out := []string{st.Heading.Render("timeline") + st.Muted.Render(fmt.Sprintf(" (%d events)", len(evs)))}
	if len(evs) == 0 {
		out = append(out, st.Muted.Render("  nothing yet"))
		return out
	}
	rows := n - 1
	end := max(len(evs)-m.scroll, min(rows, len(evs)))
	// Pin what the window leaves out; a pin narrows the window, which may
	// leave out another, so look again until nothing changes.
	for changed := true; changed; {
		changed = false
		start := max(0, end-rows)
		for _, p := range pins {
			if !p.pinned && rows > 1 && (p.at < start || p.at >= end) {
				p.pinned, rows, changed = true, rows-1, true
				break
			}
		}
	}
	for _, p := range pins {
		if p.pinned {
			out = append(out, p.line)
		}
	}
	start := max(0, end-rows)
	for _, e := range evs[start:end] {
		line := ansi.Truncate(e.String(), w, "…")
		switch e.Kind {
		case experiment.InvariantViolated, experiment.WriteRejected, experiment.Crashed:
			line = st.Error.Render(line)
		case experiment.Acquired, experiment.WriteAccepted:
			line = st.Success.Render(line)
		case experiment.Phase:
			line = st.Accent.Render(line)
		case experiment.Paused, experiment.Partitioned, experiment.LeaseExpired, experiment.Lost, experiment.SteppedDown, experiment.Waiting:
			line = st.Warning.Render(line)
		default:
			line = st.Text.Render(line)
		}
		out = append(out, line)
	}
	return out
}

func (m Model) predictPanel(w, n int) []string {
	st := m.Styles
	q := m.opts.Predict
	out := []string{st.Heading.Render("Predict first: what will happen?")}
	for _, l := range text.Clamp(text.Inline(strings.TrimSpace(q.Prompt)), w, max(2, n-2-2*len(m.order))) {
		out = append(out, st.Text.Render(l))
	}
	for i, idx := range m.order {
		for j, l := range text.Clamp(q.Options[idx].Text, w-4, 2) {
			prefix := "    "
			if j == 0 {
				prefix = st.Accent.Render(fmt.Sprintf("  %d ", i+1))
			}
			out = append(out, prefix+st.Text.Render(l))
		}
	}
	out = append(out, st.Muted.Render(ansi.Truncate("press the number of your prediction; the experiment then runs", w, "…")))
	return out
}

// resultPanel is the verdict and the prediction, in at most n lines
// (never fewer than the verdict's heading and a line of its summary):
// the takeaway goes first when room is short, then summary lines.
func (m Model) resultPanel(w, n int) []string {
	st := m.Styles
	v := m.snap.verdict
	if v == nil {
		return nil
	}
	head := st.Success.Render("the effect showed")
	if !v.Showed {
		head = st.Error.Render("the effect did not show this time")
	}
	predLines, takeaway := 0, 0
	q := m.opts.Predict
	if q != nil && m.picked >= 0 {
		predLines, takeaway = 2, 2
	}
	summary := 4
	for 1+summary+predLines+takeaway > n && takeaway > 0 {
		takeaway--
	}
	for 1+summary+predLines+takeaway > n && predLines > 1 {
		predLines--
	}
	for 1+summary+predLines+takeaway > n && summary > 1 {
		summary--
	}
	out := []string{st.Heading.Render("result ") + head}
	for _, l := range text.Clamp(v.Summary, w, summary) {
		out = append(out, st.Text.Render(l))
	}
	if q != nil && m.picked >= 0 {
		mark, style := "✓ right", st.Success
		if !q.Options[m.picked].Correct {
			mark, style = "✗ not what happened", st.Error
		}
		for i, l := range text.Clamp("you predicted: "+q.Options[m.picked].Text, w-len(mark)-1, predLines) {
			if i == 0 {
				l += " " + style.Render(mark)
			}
			out = append(out, st.Text.Render(l))
		}
		if takeaway > 0 {
			for _, l := range text.Clamp(q.Takeaway, w, takeaway) {
				out = append(out, st.Muted.Render(l))
			}
		}
	}
	return out
}

// stallAfter is how long a run may stay quiet, with a replica held down by
// the learner, before the screen says why it is waiting.
const stallAfter = 5 * time.Second

// stalled explains a run that has emitted nothing for a while although it
// is not waiting for n: the script is waiting for a replica the learner
// paused, partitioned or crashed. "" when nothing is wrong.
func (m Model) stalled(w int) string {
	if m.phase != phaseRunning {
		return ""
	}
	if s := m.scriptWaits(w); s != "" {
		return s
	}
	if m.changed.IsZero() || m.now().Sub(m.changed) < stallAfter {
		return ""
	}
	if m.snap.atStep {
		return "" // waiting for space, as the status line says
	}
	var held []string
	for _, r := range m.snap.replicas {
		switch {
		case r.Paused:
			held = append(held, r.Name+" is paused (p resumes it)")
		case r.Partitioned:
			held = append(held, r.Name+" is cut off (x heals it)")
		case r.Crashed:
			held = append(held, r.Name+" is crashed (r restarts it)")
		}
	}
	if len(held) == 0 {
		return ""
	}
	return fmt.Sprintf("Nothing has happened for %.0f s: the script is probably waiting for a replica you stopped. %s.",
		m.now().Sub(m.changed).Seconds(), strings.Join(held, "; "))
}

// scriptWaits says at once that the script cannot take its next step
// until the learner lets a replica go, in one line of w cells, while the
// script says it waits (a waiting event with Value 1, until one with
// Value 0): "" otherwise.
func (m Model) scriptWaits(w int) string {
	for i := len(m.snap.events) - 1; i >= 0; i-- {
		if e := m.snap.events[i]; e.Kind == experiment.Waiting {
			if e.Value == 0 {
				return ""
			}
			return holdHint(waitedFor(e, m.snap.replicas, m.sel), w)
		}
	}
	return ""
}
