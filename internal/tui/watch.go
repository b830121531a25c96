package tui

import (
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/text"
)

// Watch mode (lab.Watch) belongs to the root: it goes on when the learner
// leaves the lab screen, the status line of every screen says what it
// last graded, and once the watched lab passes, o opens the next lab not
// passed yet and moves the watch there.

// labOrder is the course's labs in course order: each lesson's, in the
// order the lesson lists them, then any lab no lesson lists.
func (m *Model) labOrder() []string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] && m.course.Lab(id) != nil {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, l := range m.course.Lessons {
		for _, id := range l.Labs {
			add(id)
		}
	}
	for _, l := range m.course.Labs {
		add(l.ID)
	}
	return ids
}

// labSolved reports whether lab's latest grade is a verified pass.
func (m *Model) labSolved(lab string) bool {
	if g, ok := m.prog.Labs[lab]; ok {
		return g.Status == progress.LabStatusPassed
	}
	return m.prog.LabPassed(m.labLesson(lab), lab) // saved before grades were
}

// nextLab is the lab to offer after lab passes: the next one in course
// order that is not solved, wrapping around to the start; "" when every
// lab is solved.
func (m *Model) nextLab(after string) string {
	order := m.labOrder()
	start := 0
	for i, id := range order {
		if id == after {
			start = i + 1
		}
	}
	for i := range order {
		id := order[(start+i)%len(order)]
		if id != after && !m.labSolved(id) {
			return id
		}
	}
	return ""
}

// offer is the lab that o opens now: the next one after the watched lab,
// once its watch grade is a verified pass; "" when there is none.
func (m *Model) offer() string {
	if !m.watch.Passed() {
		return ""
	}
	return m.nextLab(m.watch.Lab())
}

// openNextLab accepts the offer: it opens the next lab and watches it
// instead of the one that passed.
func (m *Model) openNextLab() tea.Cmd {
	next := m.offer()
	if next == "" {
		return nil
	}
	start := m.watch.Start(*m.course.Lab(next))
	return tea.Batch(start, m.openLab(next))
}

// watchPassed announces a verified pass of the watched lab, with the
// offer of the next one.
func (m *Model) watchPassed(lab string) {
	name := m.course.LabName(lab)
	if next := m.nextLab(lab); next != "" {
		m.setNotice(name+" passed and verified ✓ · press o to open "+m.course.LabName(next), false)
		return
	}
	m.setNotice(name+" passed and verified ✓ · every lab of the course passes now", false)
}

// watchLine is what watch mode last did, in at most w columns; "" when it
// is off. After a pass it names the offer instead.
func (m Model) watchLine(w int) string {
	lab := m.watch.Lab()
	switch {
	case lab == "":
		return ""
	case !m.watch.Passed():
		return m.watch.Status(m.styles, w)
	}
	if next := m.offer(); next != "" {
		return m.styles.Success.Render(text.FirstFit(w, "watch "+lab+": ✓ passed · o opens "+next, lab+" ✓ · o opens "+next, lab+" ✓ · o next"))
	}
	return m.styles.Success.Render(text.FirstFit(w, "watch "+lab+": ✓ passed · every lab passes", lab+" ✓ · all labs pass", lab+" ✓"))
}

// watchMinWidth is the room the watch line keeps in the status line
// before the screen's own status gives way to it: its shortest form.
func (m Model) watchMinWidth() int {
	if m.watch.Passed() {
		return lipgloss.Width(m.watch.Lab() + " ✓ · o next")
	}
	return m.watch.StatusMinWidth()
}

// statusWithWatch lays out the status line while watch mode is on: the
// screen's status on the left, then what watch mode did and a short etcd
// status on the right.
func (m Model) statusWithWatch(w int) string {
	left := m.top().Status()
	right := m.etcd.short(m.styles)
	if m.classProblem != "" {
		right = m.styles.Error.Render("● " + shortProblem(m.classProblem))
	}
	room := w - lipgloss.Width(right) - 1
	if right == "" {
		room = w
	}
	// The screen's status keeps its room while the watch line fits in one
	// of its shorter forms; past that the screen's status is cut.
	if lw, keep := lipgloss.Width(left), m.watchMinWidth(); lw > 0 && lw > room-keep-2 {
		left = text.Truncate(left, max(room-keep-2, 0))
	}
	watchRoom := room
	if left != "" {
		watchRoom -= lipgloss.Width(left) + 2
	}
	mid := m.watchLine(max(watchRoom, 1))
	gap := max(room-lipgloss.Width(left)-lipgloss.Width(mid), 0)
	line := m.styles.Muted.Render(left) + text.Spaces(gap) + mid
	if right != "" {
		line += " " + right
	}
	return line
}
