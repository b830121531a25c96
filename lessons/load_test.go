package lessons

import (
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ownership-election/playground/quiz"
)

var testExperiments = []string{"fencing", "renewal"}

func loadGood(t *testing.T) *Course {
	t.Helper()
	c, probs := Load(Sources{
		Course: os.DirFS("testdata/good"), CourseRoot: "good",
		Labs: os.DirFS("testdata/labs"), LabsRoot: "labs", OwnLabs: true,
		Experiments: testExperiments,
	})
	for _, p := range probs {
		t.Errorf("unexpected problem: %s", p)
	}
	return c
}

func TestLoadGood(t *testing.T) {
	c := loadGood(t)
	if len(c.Lessons) != 2 || c.Lessons[0].ID != "first-steps" || c.Lessons[1].ID != "second-go" {
		t.Fatalf("lessons: %+v", c.Lessons)
	}
	l := c.Lesson("first-steps")
	if l.Number != 1 || l.Title != "First steps" || l.Summary != "Where the course begins." ||
		!slices.Equal(l.Objectives, []string{"Say what a lease is."}) ||
		!slices.Equal(l.Experiments, []string{"fencing"}) || !slices.Equal(l.Labs, []string{"01_demo"}) ||
		l.QuizID != "first-steps" || l.Quiz == nil || l.Path != "good/lessons/01-first-steps/lesson.md" ||
		l.Dir != "lessons/01-first-steps" {
		t.Errorf("lesson 1: %+v", l)
	}
	if len(l.Pages) != 2 {
		t.Fatalf("lesson 1 pages: %+v", l.Pages)
	}
	p0, p1 := l.Pages[0], l.Pages[1]
	if p0.Title != "What a lease is" || p0.Line != 12 || !slices.Equal(p0.Checks, []string{"lease-basics"}) || p0.Tries != nil {
		t.Errorf("page 1: %+v", p0)
	}
	if strings.Contains(p0.Markdown, "@check") || !strings.Contains(p0.Markdown, "# not a page heading") ||
		!strings.HasPrefix(p0.Markdown, "A lease is") || !strings.HasSuffix(p0.Markdown, "```") {
		t.Errorf("page 1 markdown:\n%s", p0.Markdown)
	}
	wantTries := []Try{{TryExperiment, "fencing"}, {TryLab, "01_demo"}}
	if p1.Title != "Try it" || !slices.Equal(p1.Tries, wantTries) || p1.Markdown != "Run the experiment, then the lab." {
		t.Errorf("page 2: %+v", p1)
	}
	l2 := c.Lessons[1]
	if l2.Number != 2 || !slices.Equal(l2.Prerequisites, []string{"first-steps"}) || len(l2.Pages) != 1 ||
		l2.Pages[0].Title != "Only page" || !strings.Contains(l2.Pages[0].Markdown, "# still code") ||
		!strings.Contains(l2.Pages[0].Markdown, "@ alone") {
		t.Errorf("lesson 2: %+v", l2)
	}
	if l2.Quiz.Title != "" || l2.Quiz.Questions[0].Experiment != "fencing" {
		t.Errorf("lesson 2 quiz: %+v", l2.Quiz)
	}
}

func TestLabsAndLookups(t *testing.T) {
	c := loadGood(t)
	if len(c.Labs) != 1 {
		t.Fatalf("labs: %+v (internal/ has no lab.yaml and is not a lab)", c.Labs)
	}
	lab := c.Lab("01_demo")
	if lab == nil || lab.Title != "A demo lab" || lab.Lesson != "first-steps" || lab.File != "demo.go" ||
		lab.README != "# Demo lab\n" || lab.Path != "labs/01_demo/lab.yaml" || len(lab.Steps) != 2 {
		t.Fatalf("lab: %+v", lab)
	}
	if s := lab.Steps[0]; s.Test != "TestStep1_Works" || s.Title != "Make it work" ||
		!slices.Equal(s.Hints, []string{"Look at the TODO.", "Return nil."}) {
		t.Errorf("step 1: %+v", s)
	}
	if c.Lab("nope") != nil || c.Lesson("nope") != nil || c.Quiz("nope") != nil {
		t.Error("lookups of unknown ids are not nil")
	}
	q, l := c.Question("predict-fence")
	if q == nil || q.Kind != quiz.Predict || l != c.Lessons[1] {
		t.Errorf("Question(predict-fence) = %+v, %+v", q, l)
	}
	if q, l := c.Question("nope"); q != nil || l != nil {
		t.Error("Question of an unknown id is not nil")
	}
	if c.Quiz("second-go") != c.Lessons[1].Quiz || c.QuestionCount() != 2 {
		t.Errorf("Quiz lookup or count wrong: %d questions", c.QuestionCount())
	}
}

// A course with one problem of every cross-file kind.
func TestLoadProblems(t *testing.T) {
	good := func(name string) []byte {
		data, err := os.ReadFile("testdata/good/lessons/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	front := func(id, extra string) string {
		return "---\nid: " + id + "\ntitle: T\nsummary: S\nobjectives: [O]\nquiz: " + id + "\n" + extra + "---\n# P\n\ntext\n"
	}
	course := fstest.MapFS{
		"lessons/01-first-steps/lesson.md": {Data: good("01-first-steps/lesson.md")},
		"lessons/01-first-steps/quiz.yaml": {Data: good("01-first-steps/quiz.yaml")},
		// Same number twice, wrong id, later and unknown prerequisites,
		// unknown experiment, lab, question and a duplicate question id.
		"lessons/01-again/lesson.md": {Data: []byte(front("again",
			"prerequisites: [no-quiz, ghost, again]\nexperiments: [fencing, laser]\nlabs: [09_none]\n") +
			"\n@check nope\n@try experiment laser\n@try lab 09_none\n")},
		"lessons/01-again/quiz.yaml":      {Data: []byte("id: again\nquestions:\n  - id: lease-basics\n    kind: predict\n    experiment: laser\n    prompt: p\n    takeaway: t\n    options:\n      - {text: a, correct: true, explain: e}\n      - {text: b, explain: e}\n")},
		"lessons/03-later/lesson.md":      {Data: []byte(front("wrong-id", ""))},
		"lessons/03-later/quiz.yaml":      {Data: []byte("id: other\nquestions:\n  - {id: n, kind: numeric, prompt: p, takeaway: t, answer: 1, tolerance: 0, explain: e}\n")},
		"lessons/04-no-quiz/lesson.md":    {Data: []byte(front("no-quiz", "") + "@check anything\n")},
		"lessons/Bad Name/lesson.md":      {Data: []byte("x")},
		"lessons/05-missing/quiz.yaml":    {Data: []byte("id: missing\n")},
		"lessons/README.md":               {Data: []byte("not a lesson")},
		"lessons/01-first-steps/quiz.yml": {Data: []byte("id: typo\n")},
	}
	labs := fstest.MapFS{
		"01_demo/lab.yaml":     {Data: []byte("id: 01_demo\ntitle: T\nlesson: ghost\nfile: demo.go\nsteps:\n  - test: TestStep1_Gone\n    title: S\n    hints: [h]\n")},
		"01_demo/demo_test.go": {Data: []byte("package demo\n")},
		"02_orphan/lab.yaml":   {Data: []byte("id: 02_orphan\ntitle: T\nlesson: first-steps\nfile: o.go\nsteps:\n  - test: TestStep1_X\n    title: S\n    hints: [h]\n")},
		"02_orphan/o.go":       {Data: []byte("package o\n")},
		"02_orphan/o_test.go":  {Data: []byte("package o\n\nfunc TestStep1_X(t *testing.T) {}\n")},
	}
	_, probs := Load(Sources{Course: course, Labs: labs, LabsRoot: "labs", OwnLabs: true, Experiments: testExperiments})
	got := make([]string, len(probs))
	for i, p := range probs {
		got[i] = p.String()
	}
	want := []string{
		`labs/01_demo/lab.yaml:3: lab: lesson: unknown lesson id "ghost"`,
		`labs/01_demo/lab.yaml:4: lab: file: demo.go is not in the lab folder`,
		`labs/01_demo/lab.yaml:6: step TestStep1_Gone: no func TestStep1_Gone in the lab's _test.go files`,
		`labs/02_orphan/lab.yaml:3: lab: lesson: first-steps does not list 02_orphan under labs in its front matter`,
		`lessons/01-again/lesson.md:7: front matter: prerequisites: "no-quiz" comes later in the course (lesson 04)`,
		`lessons/01-again/lesson.md:7: front matter: prerequisites: unknown lesson id "ghost"`,
		`lessons/01-again/lesson.md:7: front matter: prerequisites: a lesson cannot require itself`,
		`lessons/01-again/lesson.md:8: front matter: experiments: unknown experiment "laser" (known: fencing, renewal)`,
		`lessons/01-again/lesson.md:9: front matter: labs: unknown lab "09_none" (known: 01_demo, 02_orphan)`,
		`lessons/01-again/lesson.md:15: @check nope: no question with this id in the lesson's quiz.yaml`,
		`lessons/01-again/lesson.md:16: @try experiment laser: unknown experiment (known: fencing, renewal)`,
		`lessons/01-again/lesson.md:17: @try lab 09_none: unknown lab (known: 01_demo, 02_orphan)`,
		`lessons/01-again/quiz.yaml:3: question lease-basics: experiment: unknown experiment "laser" (known: fencing, renewal)`,
		`lessons/01-first-steps: lesson number 01 is also used by 01-again`,
		`lessons/01-first-steps/quiz.yaml:4: question id "lease-basics" is also used by lessons/01-again/quiz.yaml:3`,
		`lessons/01-first-steps/quiz.yml: unexpected file: a lesson folder holds lesson.md and quiz.yaml only`,
		`lessons/03-later/lesson.md:2: front matter: id "wrong-id" must match the folder name without its number, "later"`,
		`lessons/03-later/lesson.md:6: front matter: quiz "wrong-id" does not match the id "other" in quiz.yaml`,
		`lessons/04-no-quiz/quiz.yaml: cannot read the lesson's quiz: file not found`,
		`lessons/05-missing/lesson.md: cannot read lesson: file not found`,
		`lessons/Bad Name: lesson folder name must be NN-slug, like 05-fencing-tokens`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

}

// The outline has what a course map shows (titles, pages, lab and
// experiment names) and nothing that needs the other files.
func TestOutlineReadsLessonFilesOnly(t *testing.T) {
	full := loadGood(t)
	o := Outline(Sources{Course: os.DirFS("testdata/good"), CourseRoot: "testdata/good", Labs: os.DirFS("testdata/labs")})
	if len(o.Lessons) != len(full.Lessons) || len(o.Labs) != 0 {
		t.Fatalf("outline has %d lessons and %d labs; want %d lessons and no labs", len(o.Lessons), len(o.Labs), len(full.Lessons))
	}
	for i, l := range o.Lessons {
		f := full.Lessons[i]
		if l.ID != f.ID || l.Title != f.Title || len(l.Pages) != len(f.Pages) || !slices.Equal(l.Labs, f.Labs) || l.Quiz != nil {
			t.Errorf("outline lesson %d = %s %q %d pages quiz %v; full %s %q %d pages", i, l.ID, l.Title, len(l.Pages), l.Quiz != nil, f.ID, f.Title, len(f.Pages))
		}
	}
}
