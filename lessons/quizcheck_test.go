package lessons

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestQuizCheck(t *testing.T) {
	question := func(id string) string {
		return "  - id: " + id + "\n    kind: single\n    prompt: " + id + "?\n    takeaway: t\n    options:\n" +
			"      - {text: a, correct: true, explain: e}\n      - {text: b, explain: e}\n"
	}
	lesson := func(id, body string) string {
		return "---\nid: " + id + "\ntitle: T\nsummary: S\nobjectives: [O]\nquiz: " + id + "\n---\n" + body
	}
	course := fstest.MapFS{
		// Two checkpoints (one asked twice) and two quiz questions.
		"lessons/01-one/lesson.md": {Data: []byte(lesson("one",
			"# A\n\ntext\n\n@check c1\n\n# B\n\ntext\n\n@check c2\n@check c1\n"))},
		"lessons/01-one/quiz.yaml": {Data: []byte("id: one\nquestions:\n" +
			question("c1") + question("q1") + question("c2") + question("q2"))},
		// No checkpoints: all three questions are the quiz.
		"lessons/02-two/lesson.md": {Data: []byte(lesson("two", "# A\n\ntext\n"))},
		"lessons/02-two/quiz.yaml": {Data: []byte("id: two\nquestions:\n" +
			question("r1") + question("r2") + question("r3"))},
	}
	c, probs := Load(Sources{Course: course, QuizFloor: 3})
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	want := []string{
		"lessons/01-one/lesson.md:19: @check c1: already asked at line 12; a checkpoint is asked once",
		"lessons/01-one/quiz.yaml:1: the end-of-lesson quiz has 2 of 4 questions (the rest are checkpoints, asked on their pages only); it needs at least 3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	var ids []string
	for _, q := range c.Lesson("one").QuizQuestions() {
		ids = append(ids, q.ID)
	}
	if strings.Join(ids, " ") != "q1 q2" {
		t.Errorf("lesson one's quiz asks %v, want [q1 q2]: never a checkpoint", ids)
	}
	if n := len(c.Lesson("two").QuizQuestions()); n != 3 {
		t.Errorf("lesson two's quiz asks %d questions, want all 3", n)
	}
	if _, probs := Load(Sources{Course: course}); len(probs) != 1 {
		t.Errorf("without a floor, want only the doubled @check, got %v", probs)
	}
}
