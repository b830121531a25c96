package progress

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/lessons"
)

// TestSplitLessonsPointAtTheirPages holds the split table to the embedded
// course: the old lesson is gone, each old page's new home has the same
// heading, and each checkpoint question is asked on a page of the lesson
// its answer moves to.
func TestSplitLessonsPointAtTheirPages(t *testing.T) {
	c := embeddedCourse(t)
	for old, split := range SplitLessons() {
		if c.Lesson(old) != nil {
			t.Errorf("lesson %s is in the course, yet SplitLessons says it was split", old)
		}
		if len(split.Pages) != len(split.Titles) {
			t.Fatalf("%s: %d homes for %d titles", old, len(split.Pages), len(split.Titles))
		}
		for i, h := range split.Pages {
			l := c.Lesson(h.Lesson)
			if l == nil || h.Page >= len(l.Pages) || l.Pages[h.Page].Title != split.Titles[i] {
				t.Errorf("%s page %d (%q) should now be page %d of %s, which is not that page", old, i, split.Titles[i], h.Page, h.Lesson)
			}
		}
	}
	for id, home := range CheckHomes() {
		if l := c.Lesson(home); l == nil || !l.Checkpoint(id) {
			t.Errorf("question %s is not a checkpoint of lesson %s, where its saved answer moves", id, home)
		}
	}
}

// savedBeforeSplit is a learner's record of the old lesson 11: four pages
// read, stopped on its eighth page (now the fencing lesson's first),
// two checkpoints answered and one quiz attempt.
const savedBeforeSplit = `{
  "version": 1,
  "last": {"lesson": "timing-sessions-and-fencing", "page": 7},
  "lessons": {
    "timing-sessions-and-fencing": {
      "pages_read": [0, 6, 7, 13], "last_page": 7,
      "checks": {
        "l11-drift-margin": {"response": "9.99", "score": 1, "correct": true, "at": "2026-11-30T10:00:00Z"},
        "l11-two-resources": {"response": "2", "score": 0, "correct": false, "at": "2026-11-30T10:05:00Z"}
      },
      "quiz": {"quiz_id": "timing-sessions-and-fencing", "answers": {"l11-token-restart": {"response": "1", "score": 1, "correct": true, "at": "2026-11-30T11:00:00Z"}}, "score": 1, "total": 6, "finished": "2026-11-30T11:00:00Z"},
      "attempts": 1, "best_quiz": 0.16
    },
    "other-coordinators": {"pages_read": [0, 1], "last_page": 1}
  }
}`

func TestSplitLessonProgressMoves(t *testing.T) {
	p, err := decode([]byte(savedBeforeSplit))
	if err != nil {
		t.Fatal(err)
	}
	check := func(p *Progress, when string) {
		t.Helper()
		if got := p.Peek("timing-and-system-models"); got == nil || !slices.Equal(got.PagesRead, []int{0}) {
			t.Errorf("%s: timing lesson record %+v, want page 0 read", when, got)
		}
		f := p.Peek("fencing-beyond-one-store")
		if f == nil || !slices.Equal(f.PagesRead, []int{0}) || f.LastPage != 0 {
			t.Fatalf("%s: fencing lesson record %+v, want page 0 read and last", when, f)
		}
		if a, ok := f.Checks["l11-two-resources"]; !ok || a.Response != "2" {
			t.Errorf("%s: the fencing lesson's checkpoint answer was not moved: %+v", when, f.Checks)
		}
		if a, ok := p.Peek("timing-and-system-models").Checks["l11-drift-margin"]; !ok || !a.Correct {
			t.Errorf("%s: the timing lesson's checkpoint answer was not moved", when)
		}
		oc := p.Peek("other-coordinators")
		if !slices.Equal(oc.PagesRead, []int{0, 1, 7}) || oc.LastPage != 1 {
			t.Errorf("%s: lesson 8's record %+v, want pages 0, 1 and 7 (the ZooKeeper sessions page), still last on 1", when, oc)
		}
		if !slices.Equal(p.Peek("failure-modes-and-security").PagesRead, []int{14}) {
			t.Errorf("%s: the auth-token page was not filed under lesson 10", when)
		}
		if p.Last != (Position{Lesson: "fencing-beyond-one-store", Page: 0}) {
			t.Errorf("%s: the place to continue is %+v, want the fencing lesson's first page", when, p.Last)
		}
		old := p.Peek("timing-sessions-and-fencing")
		if old == nil || old.Quiz == nil || old.Quiz.Answers["l11-token-restart"].Response != "1" || len(old.PagesRead) != 0 || old.Checks != nil {
			t.Errorf("%s: the old record should keep its quiz attempt and nothing else: %+v", when, old)
		}
	}
	check(p, "first load")
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	check(again, "second load")
}

// embeddedCourse is the course the program embeds, loaded once per test.
func embeddedCourse(t *testing.T) *lessons.Course {
	t.Helper()
	c, problems := lessons.Load(content.Sources())
	if c == nil {
		t.Fatalf("load the course: %v", problems)
	}
	return c
}
