package quiz

import (
	"os"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	data, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	qz, probs := Parse("testdata/valid.yaml", data)
	for _, p := range probs {
		t.Errorf("unexpected problem: %s", p)
	}
	if qz.ID != "sample" || qz.Title != "A sample quiz" || len(qz.Questions) != 6 {
		t.Fatalf("quiz = %q %q with %d questions", qz.ID, qz.Title, len(qz.Questions))
	}
	one := qz.Question("pick-one")
	if one.Kind != Single || one.Line != 4 || len(one.Options) != 3 || !one.Options[0].Correct ||
		!one.Options[2].Pin || one.Options[1].Explain != "The highest so far." {
		t.Errorf("pick-one parsed as %+v", one)
	}
	num := qz.Question("a-number")
	if num.Answer != 19 || num.Tolerance != 0.5 || num.Unit != "s" || num.Explain == "" {
		t.Errorf("a-number parsed as %+v", num)
	}
	ord := qz.Question("in-order")
	if len(ord.Items) != 4 || ord.Items[2].Text != "B acquires" {
		t.Errorf("in-order items = %+v", ord.Items)
	}
	if g := qz.Question("guess"); g.Experiment != "fencing" || len(g.Correct()) != 1 || g.Correct()[0] != 1 {
		t.Errorf("guess parsed as %+v", g)
	}
	if qz.Question("nope") != nil {
		t.Error("Question of an unknown id is not nil")
	}
}

// head is a valid quiz start; cases append one question to it (line 4 on).
const head = "id: q\ntitle: T\nquestions:\n"

func TestParseProblems(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // exact problem strings, in order
	}{
		{"syntax", "id: q\ntitle: T\n  questions: []\n", []string{
			"f.yaml:3: YAML syntax: mapping values are not allowed in this context"}},
		{"tab indent", "id: q\n\ttitle: T\n", []string{
			"f.yaml:2: YAML syntax: found a tab character that violates indentation"}},
		{"empty", "", []string{"f.yaml:1: file is empty: expected id, title and questions"}},
		{"not a mapping", "- a\n- b\n", []string{
			`f.yaml:1: expected a mapping with id, title and questions, found a list`}},
		{"missing questions", "id: q\n", []string{"f.yaml:1: quiz: missing field questions"}},
		{"bad quiz id", "id: Big Quiz\nquestions: []\n", []string{
			`f.yaml:1: quiz: id "Big Quiz": use lower-case letters, digits and dashes`,
			"f.yaml:2: quiz: questions: the list is empty"}},
		{"unknown top field", "id: q\nquestion: []\nquestions: []\n", []string{
			`f.yaml:2: quiz: unknown field "question" (known: id, title, questions)`,
			"f.yaml:3: quiz: questions: the list is empty"}},
		{"single without correct", head + `  - id: a
    kind: single
    prompt: P
    takeaway: T
    options:
      - {text: x, explain: e}
      - {text: y, explain: e}
`, []string{"f.yaml:8: question a: options: a single question needs exactly one option with correct: true, has 0"}},
		{"single with two correct", head + `  - id: a
    kind: predict
    experiment: fencing
    prompt: P
    takeaway: T
    options:
      - {text: x, correct: true, explain: e}
      - {text: y, correct: true, explain: e}
`, []string{"f.yaml:9: question a: options: a predict question needs exactly one option with correct: true, has 2"}},
		{"multi without correct, missing explain", head + `  - id: a
    kind: multi
    prompt: P
    takeaway: T
    options:
      - {text: x, explain: e}
      - {text: y}
`, []string{
			"f.yaml:10: question a: options[2]: missing field explain",
			"f.yaml:8: question a: options: a multi question needs at least one option with correct: true"}},
		{"one option", head + `  - id: a
    kind: single
    prompt: P
    takeaway: T
    options:
      - {text: x, correct: true, explain: e}
`, []string{"f.yaml:8: question a: options: needs at least 2 options, has 1"}},
		{"numeric without tolerance", head + `  - id: n
    kind: numeric
    prompt: P
    takeaway: T
    answer: 12
    explain: E
`, []string{"f.yaml:4: question n: missing field tolerance (write tolerance: 0 if only the exact answer counts)"}},
		{"numeric bad values", head + `  - id: n
    kind: numeric
    prompt: P
    takeaway: T
    answer: twelve
    tolerance: -1
    explain: E
`, []string{
			`f.yaml:8: question n: answer: expected a number, found "twelve"`,
			"f.yaml:9: question n: tolerance: must not be negative"}},
		{"numeric quoted number", head + `  - id: n
    kind: numeric
    prompt: P
    takeaway: T
    answer: "12"
    tolerance: .inf
    explain: E
`, []string{
			`f.yaml:8: question n: answer: expected a number, found "12"`,
			"f.yaml:9: question n: tolerance: must be a finite number"}},
		{"field of another kind", head + `  - id: s
    kind: single
    prompt: P
    takeaway: T
    unit: s
    options:
      - {text: x, correct: true, explain: e}
      - {text: y, explain: e}
`, []string{"f.yaml:8: question s: field unit is not used by single questions"}},
		{"unknown kind", head + `  - id: k
    kind: essay
    prompt: P
    takeaway: T
`, []string{`f.yaml:5: question k: kind: unknown kind "essay" (one of single, multi, numeric, order, predict)`}},
		{"missing basics", head + `  - kind: order
    items:
      - {text: a, explain: e}
      - {text: b, explain: e, correct: true}
`, []string{
			"f.yaml:4: question 1: missing field id",
			"f.yaml:4: question 1: missing field prompt",
			"f.yaml:4: question 1: missing field takeaway",
			`f.yaml:7: question 1: items[2]: unknown field "correct" (known: text, explain)`}},
		{"predict without experiment", head + `  - id: p
    kind: predict
    prompt: P
    takeaway: T
    options:
      - {text: x, correct: true, explain: e}
      - {text: y, explain: e}
`, []string{"f.yaml:4: question p: missing field experiment"}},
		{"duplicate ids and bad bool", head + `  - id: d
    kind: order
    prompt: P
    takeaway: T
    items: [{text: a, explain: e}, {text: b, explain: e}]
  - id: d
    kind: single
    prompt: P
    takeaway: T
    options:
      - {text: x, correct: yes please, explain: e}
      - {text: y, correct: true, explain: e}
`, []string{
			`f.yaml:14: question d: options[1]: correct: expected true or false, found "yes please"`,
			"f.yaml:9: question d: id: duplicate id (first used on line 4)"}},
		{"question not a mapping", head + "  - just text\n", []string{
			`f.yaml:4: question 1: expected a mapping with id, kind, prompt and takeaway, found "just text"`}},
		{"empty prompt", head + `  - id: e
    kind: numeric
    prompt: "  "
    takeaway: T
    answer: 1
    tolerance: 0
    explain: E
`, []string{"f.yaml:6: question e: prompt: is empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := Parse("f.yaml", []byte(tc.src))
			var got []string
			for _, p := range probs {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestProblemString(t *testing.T) {
	if s := (Problem{Path: "a.yaml", Line: 3, Msg: "m"}).String(); s != "a.yaml:3: m" {
		t.Errorf("with line: %q", s)
	}
	if s := (Problem{Path: "a.yaml", Msg: "m"}).String(); s != "a.yaml: m" {
		t.Errorf("without line: %q", s)
	}
}
