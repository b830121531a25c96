package lab

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"
)

// labName is how the header names the lab: "Lab 3.1", numbered by its
// lesson (lesson 3's first lab), or by its folder when no lesson lists
// it; the subtitle names the folder the learner edits.
func (m Model) labName() string {
	if l := m.opts.Lesson; l != nil && l.Number > 0 {
		for i, id := range l.Labs {
			if id == m.lab.ID {
				return fmt.Sprintf("Lab %d.%d", l.Number, i+1)
			}
		}
	}
	return "Lab " + m.lab.ID
}

// lessonName is how the header names the lab's lesson: its number and
// title when the course is known ("lesson 4 · Renewable leases"), else
// the lesson id from the manifest.
func (m Model) lessonName() string {
	if l := m.opts.Lesson; l != nil {
		if l.Number > 0 {
			return fmt.Sprintf("lesson %d · %s", l.Number, l.Title)
		}
		return "lesson · " + l.Title
	}
	if m.lab.Lesson == "" {
		return ""
	}
	return "lesson " + m.lab.Lesson
}

// subtitle is the line under the title: the lesson the lab belongs to and
// the file the learner edits. When the line is too long, the lesson's
// title gives way: the file is what the learner needs to find.
func (m Model) subtitle() string {
	var where string
	switch {
	case m.labsPresent:
		where = "you edit labs/" + m.lab.ID + "/" + m.lab.File
	case m.labDir != "":
		where = "labs/" + m.lab.ID + " missing from this checkout"
	default:
		where = "labs not found on this machine"
	}
	lesson := m.lessonName()
	if lesson == "" {
		return ansi.Truncate(where, m.Width, "…")
	}
	const sep = " · "
	room := m.Width - ansi.StringWidth(where) - len(sep)
	if room < len("lesson 10 …") {
		// Too narrow for both: the file wins.
		return ansi.Truncate(where, m.Width, "…")
	}
	return ansi.Truncate(lesson, room, "…") + sep + where
}
