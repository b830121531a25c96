package class

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseLearners(t *testing.T) {
	ls, err := ParseLearners(strings.NewReader("# class of 2026\nada\n\nbob  s3cret\n"), "f.txt")
	if err != nil || len(ls) != 2 || ls[1].Password != "s3cret" || ls[0].Password != "" {
		t.Fatalf("got %+v, %v", ls, err)
	}
	for in, want := range map[string]string{
		"ada\nAda\n":     "f.txt:2: learner name \"Ada\"",
		"ada\nada\n":     "f.txt:2: learner \"ada\" already listed on line 1",
		"root\n":         "f.txt:1: \"root\" is reserved",
		"a b c\n":        "f.txt:1: want NAME or NAME PASSWORD",
		"# nobody\n":     "f.txt: no learners",
		"x/y\n":          "f.txt:1: learner name \"x/y\"",
		"ok\n../etc\n":   "f.txt:2:",
		"\xff\xfe\n":     "f.txt:1:",
		"-starts-dash\n": "f.txt:1:",
	} {
		if _, err := ParseLearners(strings.NewReader(in), "f.txt"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", in, err, want)
		}
	}
}

func TestMergeKeepsEverything(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Summary{Learner: "ada", Updated: t1,
		Lessons: map[string]LessonSummary{"l1": {Read: []int{0, 1, 2}, QuizTaken: true, QuizBest: 0.5}},
		Labs:    map[string]LabSummary{"01_cas": {Passed: t1.Add(time.Hour)}}}
	b := Summary{Learner: "ada", Updated: t1.Add(2 * time.Hour),
		Lessons: map[string]LessonSummary{"l1": {Read: []int{1, 3}, QuizBest: 0.8}, "l2": {Read: []int{0}}},
		Labs:    map[string]LabSummary{"01_cas": {Passed: t1}, "02_lock": {Passed: t1}}}
	m := a.Merge(b)
	if got := m.Lessons["l1"]; fmt.Sprint(got) != fmt.Sprint(LessonSummary{Read: []int{0, 1, 2, 3}, QuizTaken: true, QuizBest: 0.8}) {
		t.Errorf("l1 merged: %+v", got)
	}
	if m.Lessons["l2"].Pages() != 1 || len(m.Labs) != 2 || !m.Labs["01_cas"].Passed.Equal(t1) || !m.Updated.Equal(b.Updated) {
		t.Errorf("merged: %+v", m)
	}
	if !m.covers(a) || !m.covers(b) || a.covers(b) {
		t.Errorf("covers: merged should cover both inputs, a should not cover b")
	}
	if a.Lessons["l1"].QuizBest != 0.5 || len(a.Labs) != 1 {
		t.Errorf("Merge changed its receiver: %+v", a)
	}
}
