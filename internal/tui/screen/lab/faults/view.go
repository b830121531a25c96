package faults

import (
	"fmt"
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

// scheduleList is the prepared schedules, the chosen one with what it
// does, under what a run is. Short of lines, the blank line and then the
// intro's lines give way, never a schedule or what it does (at 80x24 a
// long description pushed the last schedules off the view).
func (m Model) scheduleList(w, h int) []string {
	st := m.styles
	var list []string
	names := listNames()
	for i, n := range names {
		if i == m.choice {
			list = append(list, st.Selected.Render(ansi.Truncate("▸ "+n, w, "…")))
			for _, l := range strings.Split(text.Wrap(says(n), max(w-4, 10)), "\n") {
				list = append(list, st.Text.Render("    "+l))
			}
			continue
		}
		list = append(list, st.Muted.Render(ansi.Truncate("  "+n, w, "…")))
	}
	intro := strings.Split(text.Wrap("Three copies of labs/"+m.opts.Lab+" run against etcd, each a process of its own; a schedule breaks one of them (the owner of the moment, or one that waits), or you do (by-hand).", w), "\n")
	gap := []string{""}
	if room := h - 1 - len(list); room < len(intro)+1 {
		gap = nil
		switch {
		case room <= 0:
			intro = nil // the list and the chosen one's description need every line
		case room < len(intro):
			intro = clampLines(strings.Join(intro, "\n"), room, w)
		}
	}
	out := []string{st.Heading.Render("Run your code under faults")}
	for _, l := range intro {
		out = append(out, st.Muted.Render(l))
	}
	out = append(out, gap...)
	return append(out, list...)
}

// whose names whose code a run runs.
func whose(r *faultRun) string {
	if r.reference {
		return "the reference solution"
	}
	return "your code"
}

// runningLines is the run so far: how far the build has come before the
// first event, then the picture of the events so far (the timeline that
// follows the run, and the cards where there is room).
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
	sel, _, _ := r.picked()
	return append(out, m.picture(r.live, sel, w, h-len(out))...)
}

// EventLine is an event in the timeline's words, with its time padded
// ("  5.043s  r3  refused: write ..."): the line an item of one event
// reads as in the timeline's list (labrunbench finds the events a frame
// drew by it).
func EventLine(e history.Event) string {
	return fmt.Sprintf("%7.3fs  %s", e.At.Seconds(), timeline.EventWords(e))
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
	return append(out, m.picture(r.view, "", w, max(h-len(out), 3))...)
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
