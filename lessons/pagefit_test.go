package lessons

import (
	"errors"
	"strings"
	"testing"

	"github.com/ownership-election/playground/quiz"
)

// lineRenderer stands in for the reader's Markdown renderer: one output
// line per input line, so a test decides a page's length exactly.
func lineRenderer(md string, width int) (string, error) { return md + "\n\n", nil }

func pageOf(lines int) Page {
	return Page{Title: "T", Markdown: strings.Repeat("x\n", lines-2), Line: 7}
}

func TestPageFit(t *testing.T) {
	// Without checkpoints or links the reader adds two lines under the
	// text: a blank one and the one naming the next page.
	c := &Course{Lessons: []*Lesson{{Path: "l/lesson.md", Pages: []Page{pageOf(MaxPageLines - 2), pageOf(MaxPageLines - 1)}}}}
	probs := PageFit(c, lineRenderer)
	if len(probs) != 1 {
		t.Fatalf("PageFit found %d problems, want 1 (only the page of %d lines with its footer): %v", len(probs), MaxPageLines+1, probs)
	}
	p := probs[0]
	if p.Path != "l/lesson.md" || p.Line != 7 || !strings.Contains(p.Msg, "page 2") || !strings.Contains(p.Msg, "45 lines") {
		t.Errorf("problem = %s, want it at l/lesson.md:7 naming page 2 and its 45 lines", p)
	}
}

// A checkpoint adds its name, its prompt wrapped two columns in, and a
// blank line; @try links add a line and a blank one.
func TestFooterLinesCountCheckpointsAndLinks(t *testing.T) {
	q, probs := quiz.Parse("quiz.yaml", []byte(`id: q
questions:
  - id: c1
    kind: numeric
    prompt: |
      `+strings.Repeat("word ", 30)+`
    answer: 1
    tolerance: 0
    explain: e
    takeaway: t
`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	l := &Lesson{Quiz: q}
	pg := Page{Checks: []string{"c1"}, Tries: []Try{{Kind: TryLab, Name: "01_cas"}}}
	// 1 blank + (1 + 8 prompt lines, four words a line at width 20, + 1)
	// + 2 for the links + 1 for the next page.
	if n := footerLines(l, pg, 22); n != 14 {
		t.Errorf("footerLines = %d, want 14", n)
	}
}

func TestPageLinesCountsHeadingAndIgnoresTrailingBlanks(t *testing.T) {
	n, err := PageLines(Page{Title: "Heading", Markdown: "one\ntwo"}, lineRenderer, PageWidth)
	if err != nil || n != 4 { // "# Heading", "", "one", "two"
		t.Errorf("PageLines = %d, %v; want 4", n, err)
	}
}

func TestPageFitReportsRenderErrors(t *testing.T) {
	c := &Course{Lessons: []*Lesson{{Path: "l/lesson.md", Pages: []Page{pageOf(3)}}}}
	probs := PageFit(c, func(string, int) (string, error) { return "", errors.New("boom") })
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "boom") {
		t.Errorf("a render error gave %v, want one problem naming it", probs)
	}
}
