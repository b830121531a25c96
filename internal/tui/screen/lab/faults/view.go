package faults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/sentence"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/timeline"
)

// View draws the faults view in the size given by SetSize: the schedule
// list, the run's events as they come, or its verdict over the timeline.
func (m Model) View() string {
	w, h := m.width, m.height
	var lines []string
	switch r := m.runs[m.showing]; {
	case m.choosing:
		lines = m.scheduleList(w, h)
	case r == nil:
	case !r.done:
		lines = m.runningLines(r, w, h)
	default:
		lines = m.doneLines(r, w, h)
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return text.Box(strings.Join(lines, "\n"), w, h)
}

// scheduleList is the prepared schedules, the chosen one with what it does.
func (m Model) scheduleList(w, h int) []string {
	st := m.styles
	out := []string{st.Heading.Render("Run your code under faults")}
	intro := "Three copies of labs/" + m.opts.Lab + " run against etcd, each a process of its own; a schedule breaks one of them (the owner of the moment, or one that waits), or you do (by-hand)."
	for _, l := range strings.Split(text.Wrap(intro, w), "\n") {
		out = append(out, st.Muted.Render(l))
	}
	out = append(out, "")
	names := listNames()
	for i, n := range names {
		if i == m.choice {
			out = append(out, st.Selected.Render(ansi.Truncate("▸ "+n, w, "…")))
			for _, l := range strings.Split(text.Wrap(says(n), max(w-4, 10)), "\n") {
				out = append(out, st.Text.Render("    "+l))
			}
			continue
		}
		out = append(out, st.Muted.Render(ansi.Truncate("  "+n, w, "…")))
	}
	return out
}

// whose names whose code a run runs.
func whose(r *faultRun) string {
	if r.reference {
		return "the reference solution"
	}
	return "your code"
}

// runningLines is the run so far: the newest events that fit.
func (m Model) runningLines(r *faultRun, w, h int) []string {
	st := m.styles
	head := fmt.Sprintf("%s %s under %s… %s · %d events", m.spinner, sentence.Capitalize(whose(r)), r.schedule, text.Elapsed(m.opts.Now().Sub(r.started)), len(r.events))
	out := []string{st.Heading.Render(ansi.Truncate(head, w, "…"))}
	switch {
	case len(r.events) > 0:
	case r.build != nil && r.build.Packages > 0:
		// A first build: what the go command has compiled so far, which
		// a cold one (etcd's client, grpc) takes minutes over.
		out = append(out, st.Muted.Render(ansi.Truncate(fmt.Sprintf("Building the replica program (a first build takes minutes): %s", r.build), w, "…")))
	default:
		out = append(out, st.Muted.Render("Building the lab's replica program (a first build takes minutes)…"))
	}
	for _, l := range m.handLines(r) {
		out = append(out, st.Muted.Render(ansi.Truncate(l, w, "…")))
	}
	for _, e := range newestShown(r.events, h-len(out)) {
		style := st.Text
		switch e.Kind {
		case history.InvariantViolated:
			style = st.Error
		case history.WriteRejected:
			style = st.Warning
		}
		out = append(out, style.Render(ansi.Truncate(EventLine(e), w, "…")))
	}
	return out
}

// EventLine is an event as the running view draws it, in the timeline's
// words ("  5.043s  r3  refused: write ..."): its kind says no more than
// its text, but its column took a quarter of an 80-column line. Its time
// is padded so that the running view's lines stay aligned as they scroll.
func EventLine(e history.Event) string {
	return fmt.Sprintf("%7.3fs  %s", e.At.Seconds(), timeline.EventWords(e))
}

// newestShown is the newest n events the running view draws, oldest
// first; the ten-a-second kinds are left to the timeline, which folds
// them. It looks only as far back as it needs: a run of lab 09 has
// thousands of events, and each one redraws the view.
func newestShown(events []history.Event, n int) []history.Event {
	var out []history.Event
	for i := len(events) - 1; i >= 0 && len(out) < n; i-- {
		switch events[i].Kind {
		case history.WriteAccepted, history.KeyChanged, history.LeaseRenewed:
			continue
		}
		out = append(out, events[i])
	}
	slices.Reverse(out)
	return out
}

// doneLines is the verdict, the comparison, then the timeline.
func (m Model) doneLines(r *faultRun, w, h int) []string {
	st := m.styles
	if r.history == nil || r.history.Verdict == nil {
		return m.failedRunLines(r, w)
	}
	if r.explore != nil {
		return m.exploreLines(r, w, h)
	}
	v := r.history.Verdict
	mark, style := "HELD", st.Success
	if !v.Showed {
		mark, style = "VIOLATION", st.Error
	}
	head := fmt.Sprintf("%s under %s: %s", sentence.Capitalize(whose(r)), r.schedule, mark)
	out := []string{style.Render(ansi.Truncate(head, w, "…"))}
	for _, l := range clampLines(text.Wrap(violationText(v), w), 2, w) {
		out = append(out, st.Text.Render(l))
	}
	if other := m.runs[1-m.showing]; other != nil && other.history != nil && other.history.Verdict != nil {
		ov := other.history.Verdict
		word := "held"
		if !ov.Showed {
			word = "violation: " + violationText(ov)
		}
		same := "schedule"
		if m.runs[1] != nil && m.runs[1].replay != "" {
			same = "faults" // the reference replayed my run's faults
		}
		out = append(out, st.Muted.Render(ansi.Truncate(fmt.Sprintf("%s on the same %s: %s", sentence.Capitalize(whose(other)), same, word), w, "…")))
	}
	if r.view != nil {
		v := *r.view
		v.SetSize(w, max(h-len(out), 3))
		out = append(out, strings.Split(v.View(), "\n")...)
	}
	return out
}

// failedRunLines says why a run has no verdict: the lab does not compile,
// is not written yet, or the run failed; in the child's words.
func (m Model) failedRunLines(r *faultRun, w int) []string {
	st := m.styles
	head := fmt.Sprintf("%s under %s: no verdict", sentence.Capitalize(whose(r)), r.schedule)
	if r.code != history.ExitCouldNotRun { // not written, not compiling, timed out: the child says which
		head += fmt.Sprintf(" (exit %d)", r.code)
	}
	out := []string{st.Error.Render(ansi.Truncate(head, w, "…"))}
	why := r.stderr
	if r.err != nil {
		why = r.err.Error() + "\n" + why
	}
	if strings.TrimSpace(why) == "" {
		why = "The run ended without saying why."
	}
	for _, l := range strings.Split(text.Wrap(why, w), "\n") {
		out = append(out, st.Text.Render(l))
	}
	return out
}

// violationText is the sentence of a verdict's violation at an instant
// ("Kept-working at 7.20 s: ..."), else the whole verdict's: what the
// checker held the code to, each held, or violations of the run as a
// whole.
func violationText(v *history.Verdict) string {
	if f, ok := v.TimedViolation(); ok {
		return f.Sentence()
	}
	return v.Sentence()
}

func clampLines(s string, n, w int) []string {
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[:n]
		ls[n-1] = ansi.Truncate(strings.TrimRight(ls[n-1], " "), w-1, "") + "…"
	}
	return ls
}
