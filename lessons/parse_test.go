package lessons

import (
	"strings"
	"testing"
)

// fm is valid front matter (lines 1-7); bodies in the cases start on line 8.
const fm = "---\nid: a\ntitle: T\nsummary: S\nobjectives: [O]\nquiz: a\n---\n"

func TestParseLessonProblems(t *testing.T) {
	wide := strings.Repeat("─", MaxFenceWidth+1)
	cases := []struct {
		name, src string
		want      []string
	}{
		{"no front matter", "# Page\n\ntext\n", []string{
			"l.md:1: front matter: the file must start with a line ---, then the YAML fields, then ---"}},
		{"unclosed front matter", "---\nid: a\n# Page\n", []string{"l.md:1: front matter: no closing --- line"}},
		{"empty front matter", "---\n---\n# P\n\nx\n", []string{
			"l.md:1: front matter: is empty (needs id, title, summary, objectives, quiz)"}},
		{"yaml syntax", "---\nid: a\ntitle: T\n  summary: S\n---\n# P\n\nx\n", []string{
			"l.md:4: YAML syntax: mapping values are not allowed in this context"}},
		{"missing fields", "---\nid: a\nlabs: 04_fencing\nexperiment: [x]\n---\n# P\n\nx\n", []string{
			`l.md:4: front matter: unknown field "experiment" (known: id, title, summary, objectives, prerequisites, experiments, labs, quiz)`,
			"l.md:2: front matter: missing field title",
			"l.md:2: front matter: missing field summary",
			"l.md:2: front matter: missing field quiz",
			"l.md:2: front matter: objectives: list at least one learning objective",
			`l.md:3: front matter: labs: expected a list, like [a, b], found "04_fencing"`,
		}},
		{"bad id and empty objectives", "---\nid: Fencing Tokens\ntitle: T\nsummary: S\nobjectives: []\nquiz: a\n---\n# P\n\nx\n", []string{
			`l.md:2: front matter: id "Fencing Tokens": use lower-case letters, digits and dashes`,
			"l.md:5: front matter: objectives: list at least one learning objective",
		}},
		{"no pages", fm + "just text\n", []string{
			"l.md:8: text before the first page heading (# Title) belongs to no page",
			"l.md:8: the lesson has no pages: start each page with a level-1 heading (# Title)",
		}},
		{"empty pages", fm + "# One\n\n# Two\n## only a subheading? no: that is text\n#\n\n", []string{
			`l.md:8: page "One" is empty: write some text under its heading`,
			"l.md:12: page heading has no title",
			`l.md:12: page "" is empty: write some text under its heading`,
		}},
		{"page with only a check is not empty", fm + "# Check\n@check q1\n", nil},
		{"bad directives", fm + "# P\n\ntext\n@check\n@check a b\n@try lab\n@try test x\n@tryit x\n", []string{
			"l.md:11: @check takes one question id: @check QUESTION-ID",
			"l.md:12: @check takes one question id: @check QUESTION-ID",
			"l.md:13: @try takes a kind and a name: @try experiment NAME or @try lab LAB-ID",
			"l.md:14: @try takes a kind and a name: @try experiment NAME or @try lab LAB-ID",
			"l.md:15: unknown directive @tryit (known: @check, @try)",
		}},
		{"directive before a page", fm + "@check q1\n# P\n\nx\n", []string{
			"l.md:8: directive @check before the first page heading"}},
		{"tab-indented fenced line measured with tabs expanded", fm + "# P\n\n```go\n\t\t" + strings.Repeat("x", MaxFenceWidth-8) + "\n\t\t" + strings.Repeat("x", MaxFenceWidth-7) + "\n```\n", []string{
			"l.md:12: line in fenced block is 77 columns wide; keep it within 76 to fit an 80-column terminal"}},
		{"wide fenced line", fm + "# P\n\n```text\n" + wide + "\n" + strings.Repeat("─", MaxFenceWidth) + "\n```\n" + wide + "\n", []string{
			"l.md:11: line in fenced block is 77 columns wide; keep it within 76 to fit an 80-column terminal"}},
		{"unclosed fence", fm + "# P\n\n```go\ncode\n# not a page\n", []string{
			"l.md:10: fenced block opened here is never closed"}},
		{"crlf line endings", strings.ReplaceAll(fm+"# P\n\nx\n", "\n", "\r\n"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := ParseLesson("l.md", []byte(tc.src))
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

func TestHeading1(t *testing.T) {
	for _, tc := range []struct {
		line, title string
		ok          bool
	}{
		{"# Title", "Title", true},
		{"   # Indented", "Indented", true},
		{"    # Code", "", false},
		{"## Sub", "", false},
		{"#hashtag", "", false},
		{"# Closed ##", "Closed", true},
		{"# C# is a language", "C# is a language", true},
		{"#", "", true},
	} {
		title, ok := heading1(tc.line)
		if title != tc.title || ok != tc.ok {
			t.Errorf("heading1(%q) = %q, %v; want %q, %v", tc.line, title, ok, tc.title, tc.ok)
		}
	}
}

func TestParseLab(t *testing.T) {
	tests := map[string]bool{"TestStep1_A": true, "TestStep2_B": true}
	cases := []struct {
		name, src string
		want      []string
	}{
		{"valid", "id: 04_x\ntitle: T\nlesson: l\nfile: x.go\nsteps:\n  - test: TestStep1_A\n    title: A\n    hints: [h1, h2]\n", nil},
		{"problems", "id: 05_y\ntitle: T\nlesson: l\nfile: x_test.go\nsteps:\n  - test: TestStep1_A\n    title: A\n  - test: TestStep9_Z\n    title: Z\n    hints: []\n  - test: TestStep1_A\n    title: again\n    hints: [h]\n", []string{
			`lab.yaml:1: lab: id "05_y" must match the folder name "04_x"`,
			`lab.yaml:4: lab: file "x_test.go": name the stub the learner edits, a .go file in the lab folder (not a test)`,
			"lab.yaml:6: step TestStep1_A: needs at least one hint",
			"lab.yaml:8: step TestStep9_Z: no func TestStep9_Z in the lab's _test.go files",
			"lab.yaml:10: step TestStep9_Z: needs at least one hint",
			"lab.yaml:11: step TestStep1_A: the same test is listed twice",
		}},
		{"no steps", "id: 04_x\ntitle: T\nlesson: l\nfile: x.go\nsteps: []\n", []string{
			"lab.yaml:5: lab: steps: expected a list of at least one step"}},
		{"not a mapping", "[1, 2]\n", []string{"lab.yaml:1: lab.yaml: expected fields id, title, lesson, file and steps"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lab, probs := ParseLab("lab.yaml", "04_x", []byte(tc.src), tests)
			var got []string
			for _, p := range probs {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if lab == nil || lab.ID != "04_x" {
				t.Errorf("lab = %+v", lab)
			}
		})
	}
}
