package experiment

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/timeline"
)

// statusLine is the run's state and the parameters of the next run,
// the least telling parameters left out when w is short.
func (m Model) statusLine(w int) string {
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
	var parts []string
	if !m.sc.NoReplicas { // no replica, no lease: its TTL is nobody's
		parts = append(parts, history.TTLLabel(m.params.TTL))
	}
	if m.sc.Name == "fencing" {
		parts = append(parts, "fencing "+variant(m.params.Fencing))
	}
	if m.sc.Name == "ttl-unlock-bug" {
		parts = append(parts, "versioned unlock "+variant(m.params.VersionedUnlock))
	}
	if m.phase != phaseRunning {
		parts = append(parts, map[bool]string{true: "step mode", false: "auto-play " + tempoLabel(m.tempo)}[m.params.Step])
	}
	for len(parts) > 0 && len(state)+3*len(parts)+len(strings.Join(parts, "")) > w {
		parts = parts[:len(parts)-1]
	}
	rest := ""
	if len(parts) > 0 {
		rest = " · " + strings.Join(parts, " · ")
	}
	return st.Accent.Render(text.CutWords(state, w)) + st.Muted.Render(rest)
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
	rs := m.cardStates()
	if len(rs) == 0 {
		return nil
	}
	fit := max(1, w/(timeline.CardWidth+1))
	first := 0
	if m.sel >= fit {
		first = m.sel - fit + 1
	}
	last := min(len(rs), first+fit)
	var boxes []string
	for i := first; i < last; i++ {
		boxes = append(boxes, timeline.Card(m.Styles, rs[i], rs[i].Name == m.selected()))
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

// resourceLine is the protected resource now, in w cells: what it
// holds, what it took and refused.
func (m Model) resourceLine(w int) string {
	st := m.Styles
	if m.phase == phasePredict || m.phase == phaseReady || m.phase == phaseStarting {
		return st.Muted.Render("resource: (not running)")
	}
	r := m.resourceAtCursor()
	value := "(empty)"
	if r.Writer != "" {
		value = fmt.Sprintf("%q by %s", r.Value, r.Writer)
	}
	parts := []string{value, fmt.Sprintf("accepted %d", r.Accepted)}
	// Tokens and the fencing switch mean something only in the experiment
	// about fencing; elsewhere they read as a feature that is off.
	if m.sc.Name == "fencing" {
		parts = append([]string{"fencing " + onOff(r.Fencing), fmt.Sprintf("highest %d", r.Highest)}, parts...)
	}
	rej := fmt.Sprintf("rejected %d", r.Rejected)
	body := text.CutWords(" "+strings.Join(parts, " · ")+" · "+rej, w-len("resource"))
	if r.Rejected > 0 && strings.HasSuffix(body, rej) {
		return st.Heading.Render("resource") + st.Text.Render(strings.TrimSuffix(body, rej)) + st.Warning.Render(rej)
	}
	return st.Heading.Render("resource") + st.Text.Render(body)
}

// resourceAtCursor is the resource at the timeline's cursor, as the
// history's writes left it; the run's own report while the cursor
// follows the run.
func (m Model) resourceAtCursor() history.ResourceState {
	if m.isLive() {
		return m.snap.resource
	}
	if r, ok := m.timeline().Resource(); ok {
		return r
	}
	return m.snap.resource
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func (m Model) predictPanel(w, n int) []string {
	st := m.Styles
	q := m.sc.Predict
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
	out = append(out, st.Muted.Render(text.CutWords("press the number of your prediction; the experiment then runs and judges it", w)))
	if m.notice != "" {
		out = append(out, st.Warning.Render(text.CutWords(m.notice, w)))
	}
	return out
}

// resultPanel is what the checker found and, beside it, what the
// learner predicted, judged by this run, and what the run bore out, in
// at most n lines (at least the heading and a line of each): side by
// side on a wide screen, one under the other on a narrow one, where what
// the run bore out gives way first.
func (m Model) resultPanel(w, n int) []string {
	st := m.Styles
	v := m.snap.verdict
	if v == nil {
		return nil
	}
	head := st.Heading.Render("result ") + st.Success.Render("the effect showed")
	if !v.Showed {
		head = st.Heading.Render("result ") + st.Error.Render("the effect did not show this time")
	}
	found := "The checker found: " + v.Sentence()
	p := m.predicted
	if p == nil {
		return append([]string{head}, styled(st.Text, text.ClampWords(found, w, n-1))...)
	}
	mark, markStyle := "✓ right", st.Success
	if !p.Correct {
		mark, markStyle = "✗ not what happened", st.Error
	}
	predicted := "You predicted: " + p.Picked
	bore := "This run bore out none of the options."
	if texts := m.outcomeTexts(); len(texts) > 0 {
		bore = "What this run did: " + strings.Join(texts, "; ")
	}
	if p.Unjudged != "" {
		mark, markStyle = "– not judged", st.Warning
		bore = "This run cannot judge it: " + p.Unjudged + ". Run it again to have it judged."
	}
	showBore := !p.Correct // wrong, or not judged: say why
	if w >= 120 {
		half := (w - 3) / 2
		left := text.ClampWords(found, half, n-1)
		right := append(text.ClampWords(predicted, half, max(1, n-2)), markStyle.Render(mark))
		if showBore {
			right = append(right, styled(st.Muted, text.ClampWords(bore, half, max(0, n-1-len(right))))...)
		}
		return append([]string{head}, sideBySide(styled(st.Text, left), right, half)...)
	}
	// The pick takes a second line when it needs one and the panel has
	// room for the checker's sentence besides.
	predLines, boreLines := 1, 0
	if showBore {
		boreLines = len(text.ClampWords(bore, w, n))
	}
	if len(text.ClampWords(predicted, w-len(mark)-1, 2)) > 1 && n >= 3+len(text.ClampWords(found, w, n))+boreLines {
		predLines = 2
	}
	foundLines := max(1, n-1-predLines)
	out := append([]string{head}, styled(st.Text, text.ClampWords(found, w, foundLines))...)
	pred := text.ClampWords(predicted, w-len(mark)-1, predLines)
	pred[len(pred)-1] += " " + markStyle.Render(mark)
	out = append(out, styled(st.Text, pred)...)
	if rest := n - len(out); rest > 0 && showBore {
		out = append(out, styled(st.Muted, text.ClampWords(bore, w, rest))...)
	}
	return out
}

// styled renders every line with s.
func styled(s lipgloss.Style, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = s.Render(l)
	}
	return out
}

// sideBySide puts right beside left (left padded to w cells and a gap).
func sideBySide(left, right []string, w int) []string {
	var out []string
	for i := range max(len(left), len(right)) {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out = append(out, strings.TrimRight(l+strings.Repeat(" ", max(0, w-ansi.StringWidth(l)))+" │ "+r, " "))
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
		if e := m.snap.events[i]; e.Kind == history.Waiting {
			if e.Value == 0 {
				return ""
			}
			return holdHint(waitedFor(e, m.snap.replicas, m.sel), w)
		}
	}
	return ""
}
