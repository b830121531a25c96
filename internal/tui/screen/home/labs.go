package home

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"charm.land/bubbles/v2/key"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/lessons"
)

// The lab folders are numbered in the order they were written, not by
// lesson (05_etcd_lock belongs to lesson 7), so the map names each lab by
// its lesson's number ("lab 7.1", Course.LabName) and its title, with the
// folder the learner edits beside it.

// labNumbers is "7.1, 7.2, 7.3" for a lesson's labs.
func (h Model) labNumbers(ids []string) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strings.TrimPrefix(h.course.LabName(id), "lab ")
	}
	return strings.Join(names, ", ")
}

// labKey handles l: a lesson with one lab opens it; a lesson with several
// lists them to pick one by number (enter opens the first not passed yet).
func (h *Model) labKey(sel *lessons.Lesson) tea.Cmd {
	switch {
	case len(sel.Labs) > 1:
		h.choosingLabs = sel.Labs
	case len(sel.Labs) == 1:
		return screen.Send(screen.OpenLab{Lab: sel.Labs[0]})
	}
	return nil
}

// chooseLab takes the key pressed while the lab list is open: a number
// opens that lab, enter the next one not passed, anything else closes the
// list.
func (h *Model) chooseLab(k tea.KeyPressMsg) tea.Cmd {
	ids := h.choosingLabs
	h.choosingLabs = nil
	if n := int(k.Code - '1'); len(k.Text) == 1 && n >= 0 && n < len(ids) {
		return screen.Send(screen.OpenLab{Lab: ids[n]})
	}
	if key.Matches(k, h.keys.Open) {
		if next := h.rows[h.cursor].nextLab; next != "" {
			return screen.Send(screen.OpenLab{Lab: next})
		}
	}
	return nil
}

// labTitle is a lab's title from its manifest, "" when the labs are not
// loaded (yet).
func (h Model) labTitle(id string) string {
	if l := h.course.Lab(id); l != nil && l.Title != id {
		return l.Title
	}
	return ""
}

// labState is a lab's standing in a few words: passed, failing at a step,
// or not graded.
func (h Model) labState(lessonID, id string) (string, bool) {
	var g *progress.LabGrade
	if h.progress != nil {
		if lg, ok := h.progress.Labs[id]; ok {
			g = &lg
		}
	}
	passed := h.progress != nil && h.progress.LabPassed(lessonID, id)
	switch {
	case g != nil && g.Status == progress.LabStatusPassed, g == nil && passed:
		return "✓ passed", true
	case g != nil && passed:
		return "passed before, now " + string(g.Status), false
	case g != nil:
		return string(g.Status), false
	}
	return "", false
}

// labChooser lists the selected lesson's labs by number, with their
// titles and where the learner stands.
func (h *Model) labChooser(w int) string {
	st := h.Styles
	l := h.selected()
	var b strings.Builder
	b.WriteString(st.Heading.Render(text.Truncate(fmt.Sprintf("Which lab of lesson %d?", l.Number), w)) + "\n")
	for i, id := range h.choosingLabs {
		line := " " + h.course.LabName(id)
		if t := h.labTitle(id); t != "" {
			line += " · " + t
		}
		line += " · " + id
		state, good := h.labState(l.ID, id)
		num := st.Accent.Render(fmt.Sprint(i + 1))
		if state == "" {
			b.WriteString(num + st.Text.Render(text.Truncate(line, w-1)) + "\n")
			continue
		}
		stateW := len([]rune(state)) + 2
		line = text.Truncate(line, max(w-1-stateW, 8))
		style := st.Muted
		if good {
			style = st.Success
		}
		b.WriteString(num + st.Text.Render(line) + style.Render("  "+state) + "\n")
	}
	hint := "press its number · esc closes this list"
	if next := h.rows[h.cursor].nextLab; next != "" {
		hint = "press its number, enter for " + h.course.LabName(next) + " · esc closes"
	}
	b.WriteString(st.Muted.Render(text.Truncate(hint, w)))
	return b.String()
}

// labList is the wide detail panel's list of the lesson's labs.
func (h Model) labList(l *lessons.Lesson, w int) string {
	if len(l.Labs) == 0 {
		return ""
	}
	st := h.Styles
	var b strings.Builder
	b.WriteString(st.Heading.Render("Labs of this lesson") + "\n")
	for _, id := range l.Labs {
		line := h.course.LabName(id)
		if t := h.labTitle(id); t != "" {
			line += " · " + t
		}
		line += " (" + id + ")"
		state, good := h.labState(l.ID, id)
		if good {
			line = "✓ " + line
		} else {
			line = "• " + line
		}
		style := st.Text
		if good {
			style = st.Success
		}
		b.WriteString(style.Render(text.Hang("", line, w)) + "\n")
		if state != "" && !good {
			b.WriteString(st.Muted.Render(text.Truncate("  "+state, w)) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// chooserHelp is the one-line help while a list of labs or experiments
// is open: the lesson keys do not apply then.
func (h *Model) chooserHelp() []key.Binding {
	pick := key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "open"))
	out := []key.Binding{pick}
	if h.choosingLabs != nil {
		out = append(out, key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next to pass")))
	}
	return append(out, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close list")))
}
