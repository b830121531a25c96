package home

import (
	"slices"

	"github.com/ownership-election/playground/lessons"
)

// nextUnread is where c takes the learner: the next page not read yet
// after where they left off, in that lesson (or an earlier page of it
// skipped), else the first unread page of the lessons after it, then of
// those before; when every page is read, where they left off. unread
// says a page not read was found.
func (h Model) nextUnread() (l *lessons.Lesson, page int, unread bool) {
	ls := h.course.Lessons
	if len(ls) == 0 {
		return nil, 0, false
	}
	start := 0
	if cur := h.course.Lesson(h.last.Lesson); cur != nil {
		start = slices.Index(ls, cur)
		if pg, ok := h.firstUnread(cur, h.last.Page+1); ok {
			return cur, pg, true
		}
	}
	for i := range ls {
		l := ls[(start+i)%len(ls)]
		if pg, ok := h.firstUnread(l, 0); ok {
			return l, pg, true
		}
	}
	if cur := h.course.Lesson(h.last.Lesson); cur != nil {
		return cur, h.last.Page, false
	}
	return ls[0], 0, false
}

// firstUnread is the first page of l not read, looking from page from to
// the end, then from the start.
func (h Model) firstUnread(l *lessons.Lesson, from int) (int, bool) {
	var read []int
	if rec := h.progress.Peek(l.ID); rec != nil {
		read = rec.PagesRead
	}
	n := len(l.Pages)
	for i := range n {
		pg := (from + i) % n
		if _, found := slices.BinarySearch(read, pg); !found {
			return pg, true
		}
	}
	return 0, false
}
