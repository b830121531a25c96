package class

import (
	"strings"
	"testing"
	"time"
)

func TestCheckRefusesWhatTheCourseCannotProduce(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := Course{Lessons: []CourseLesson{{ID: "l1", Pages: 3}}, Labs: []string{"01_cas"}}
	good := Summary{Updated: now.Add(4 * time.Minute), Lessons: map[string]LessonSummary{"l1": {Read: []int{0, 2}, QuizTaken: true, QuizBest: 1}},
		Labs: map[string]LabSummary{"01_cas": {Passed: now.Add(-time.Hour)}}}
	if p := c.Check(good, now); len(p) != 0 {
		t.Fatalf("a plausible summary is refused: %v", p)
	}
	cases := map[string]struct {
		s    Summary
		want string
	}{
		"quiz over 100%":    {Summary{Lessons: map[string]LessonSummary{"l1": {QuizTaken: true, QuizBest: 50}}}, "outside 0–100%"},
		"quiz under 0%":     {Summary{Lessons: map[string]LessonSummary{"l1": {QuizTaken: true, QuizBest: -3}}}, "outside 0–100%"},
		"page past the end": {Summary{Lessons: map[string]LessonSummary{"l1": {Read: []int{0, 7}}}}, "page 8 does not exist"},
		"negative page":     {Summary{Lessons: map[string]LessonSummary{"l1": {Read: []int{-1}}}}, "does not exist"},
		"repeated pages":    {Summary{Lessons: map[string]LessonSummary{"l1": {Read: []int{1, 1, 1}}}}, "repeated"},
		"unknown lesson":    {Summary{Lessons: map[string]LessonSummary{"l9": {Read: []int{0}}}}, `lesson "l9" is not in the course`},
		"unknown lab":       {Summary{Labs: map[string]LabSummary{"99_fake": {Passed: now}}}, `lab "99_fake" is not in the course`},
		"lab from 2099":     {Summary{Labs: map[string]LabSummary{"01_cas": {Passed: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)}}}, "later than now"},
		"updated in 2099":   {Summary{Updated: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)}, "later than now"},
		"score, no quiz":    {Summary{Lessons: map[string]LessonSummary{"l1": {QuizBest: 0.5}}}, "without a quiz taken"},
		"not JSON":          {readSummary("ada", []byte("{not json")), "decode class summary"},
		"huge":              {readSummary("ada", []byte(`{"learner":"`+strings.Repeat("x", MaxSummaryBytes)+`"}`)), "more than"},
	}
	for name, tc := range cases {
		p := c.Check(tc.s, now)
		if !strings.Contains(strings.Join(p, "\n"), tc.want) {
			t.Errorf("%s: problems %q, want one saying %q", name, p, tc.want)
		}
		r := row(c, tc.s, now)
		if len(r.Invalid) == 0 || r.LabsPassed != 0 || r.PagesRead != 0 || r.QuizzesTaken != 0 || !r.Updated.IsZero() {
			t.Errorf("%s: an invalid summary must count nothing: %+v", name, r)
		}
	}
}
