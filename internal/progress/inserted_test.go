package progress

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestInsertedPagesAreInTheCourse holds the table to the embedded course:
// each inserted page is at its index with its heading.
func TestInsertedPagesAreInTheCourse(t *testing.T) {
	c := embeddedCourse(t)
	for id, changes := range PagesInserted() {
		l := c.Lesson(id)
		if l == nil {
			t.Fatalf("PagesInserted names lesson %s, which is not in the course", id)
		}
		for _, ch := range changes {
			if ch.Numbering > pageNumbering || len(ch.At) != len(ch.Titles) || !slices.IsSorted(ch.At) {
				t.Fatalf("%s: %+v", id, ch)
			}
			for i, at := range ch.At {
				if at >= len(l.Pages) || l.Pages[at].Title != ch.Titles[i] {
					t.Errorf("%s: page %d should be the inserted %q", id, at, ch.Titles[i])
				}
			}
		}
	}
}

// savedBeforeInsertions is a learner's record from before pages were put
// in the middle of lessons 7 and 10: in lesson 7 (12 pages then) the
// first page, "A leader loop that stops in time" (9), "The guard" (10)
// and "Your leader loop under faults" (11, the last, where they
// stopped); in lesson 10 (12 pages) "Starting over after an outage" (6)
// and "Least privilege on coordination keys" (7); and lesson 11 from
// before its split, whose last page now ends lesson 10.
const savedBeforeInsertions = `{
  "version": 1,
  "last": {"lesson": "etcd-election-recipe", "page": 11},
  "lessons": {
    "etcd-election-recipe": {"pages_read": [0, 9, 10, 11], "last_page": 11},
    "failure-modes-and-security": {"pages_read": [6, 7], "last_page": 7},
    "timing-sessions-and-fencing": {"pages_read": [13], "last_page": 13},
    "renewable-leases": {"pages_read": [3, 9], "last_page": 9}
  }
}`

// TestSavedPagesFollowInsertedPages: marks saved before the insertions
// are on the same pages after them (by heading), lesson 11's split page
// lands where the split table says, other lessons keep their numbers,
// and a file read, saved and read again moves nothing twice.
func TestSavedPagesFollowInsertedPages(t *testing.T) {
	p, err := decode([]byte(savedBeforeInsertions))
	if err != nil {
		t.Fatal(err)
	}
	c := embeddedCourse(t)
	titles := func(id string, pages []int) []string {
		var out []string
		for _, pg := range pages {
			out = append(out, c.Lesson(id).Pages[pg].Title)
		}
		return out
	}
	check := func(p *Progress, when string) {
		t.Helper()
		l7 := p.Peek("etcd-election-recipe")
		want7 := []string{"The etcd recipe in one transaction", "A leader loop that stops in time", "The guard", "Your leader loop under faults"}
		if got := titles("etcd-election-recipe", l7.PagesRead); !slices.Equal(got, want7) {
			t.Errorf("%s: lesson 7's pages read are %q, want %q", when, got, want7)
		}
		if l7.LastPage != 13 || p.Last != (Position{Lesson: "etcd-election-recipe", Page: 13}) {
			t.Errorf("%s: lesson 7 continues at %d (last %+v), want its last page, 13", when, l7.LastPage, p.Last)
		}
		l10 := p.Peek("failure-modes-and-security")
		want10 := []string{"Starting over after an outage", "Least privilege on coordination keys", "A Campaign that outlives its auth token"}
		if got := titles("failure-modes-and-security", l10.PagesRead); !slices.Equal(got, want10) {
			t.Errorf("%s: lesson 10's pages read are %q, want %q", when, got, want10)
		}
		if l10.LastPage != 9 {
			t.Errorf("%s: lesson 10 continues at %d, want 9 (Least privilege)", when, l10.LastPage)
		}
		if l4 := p.Peek("renewable-leases"); !slices.Equal(l4.PagesRead, []int{3, 9}) || l4.LastPage != 9 {
			t.Errorf("%s: lesson 4, which gained no page, moved: %+v", when, l4)
		}
	}
	check(p, "read")
	if p.PageNumbering != pageNumbering {
		t.Fatalf("the file read is in numbering %d, want %d", p.PageNumbering, pageNumbering)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	check(again, "saved and read again")
	if fresh := New(); fresh.PageNumbering != pageNumbering {
		t.Errorf("a new record is in numbering %d, want %d", fresh.PageNumbering, pageNumbering)
	}
}

// TestRenumberOddMarks: marks no course has (past the end, in a lesson
// with no record but the last position) renumber without a panic and
// keep their order, and nothing is dropped.
func TestRenumberOddMarks(t *testing.T) {
	p, err := decode([]byte(`{"version": 1, "last": {"lesson": "failure-modes-and-security", "page": 500},
  "lessons": {"etcd-election-recipe": {"pages_read": [8, 9, 12, 400], "last_page": -3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	l7 := p.Peek("etcd-election-recipe")
	if !slices.Equal(l7.PagesRead, []int{8, 10, 14, 402}) || l7.LastPage != 0 {
		t.Errorf("lesson 7's marks: %+v", l7)
	}
	if p.Last.Page != 502 {
		t.Errorf("the last position: %+v", p.Last)
	}
}
