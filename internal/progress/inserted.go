package progress

// Pages are saved by number (PagesRead, LastPage, Last.Page), so a page
// put in the middle of a lesson moves every page after it one on: a
// learner who had read "page 10" of lesson 7 before its new pages came
// would find a page they never saw marked read, and continue on the
// wrong one. Files say which numbering they were saved in
// (Progress.PageNumbering); one saved in an older numbering has its
// marks moved to the pages they were made on when it is read, once.

// pageNumbering is the numbering this program saves page marks in: 1
// since pages were inserted in lessons 7 and 10 (issue 35 B). A file
// without one (0) was saved before.
const pageNumbering = 1

// InsertedPages is where pages went in the middle of a lesson, for one
// change of numbering.
type InsertedPages struct {
	// Numbering is the numbering the pages came in.
	Numbering int
	// At is each new page's index in that numbering, ascending.
	At []int
	// Titles are the new pages' headings, by the same index; a test holds
	// each to the course.
	Titles []string
}

// PagesInserted lists, by lesson id, the pages inserted since files were
// saved in an older numbering. Lesson 7 gained "A lock belongs to its
// session" and "When Campaign returns an error", lesson 10 "A waiter on
// a cut-off member" and "Watch events come from your member". Pages put
// at a lesson's end (lesson 11's split, lesson 5's last page) move
// nothing and are not listed.
func PagesInserted() map[string][]InsertedPages {
	return map[string][]InsertedPages{
		"etcd-election-recipe": {{Numbering: 1, At: []int{9, 12},
			Titles: []string{"A lock belongs to its session", "When Campaign returns an error"}}},
		"failure-modes-and-security": {{Numbering: 1, At: []int{7, 8},
			Titles: []string{"A waiter on a cut-off member", "Watch events come from your member"}}},
	}
}

// renumber is page, saved before the pages at (ascending) were inserted,
// in the numbering after: one on for each inserted page at or before
// where it has moved to. A page past the old end (one added at the end
// in between) keeps its place after all of them.
func renumber(page int, at []int) int {
	for _, a := range at {
		if a <= page {
			page++
		}
	}
	return page
}

// renumberPages moves the page marks of a file saved in an older
// numbering to the pages they were made on, and says the file is in
// this program's numbering, so they move once. It runs before
// moveSplitLessons, whose table is in the current numbering.
func (p *Progress) renumberPages() {
	from := p.PageNumbering
	if from >= pageNumbering {
		return
	}
	p.PageNumbering = pageNumbering
	for id, changes := range PagesInserted() {
		for _, c := range changes {
			if c.Numbering <= from {
				continue
			}
			if l := p.Lessons[id]; l != nil {
				for i, pg := range l.PagesRead {
					l.PagesRead[i] = renumber(pg, c.At) // order kept: renumber never decreases
				}
				l.LastPage = renumber(l.LastPage, c.At)
			}
			if p.Last.Lesson == id {
				p.Last.Page = renumber(p.Last.Page, c.At)
			}
		}
	}
}
