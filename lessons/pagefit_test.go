package lessons

import (
	"errors"
	"strings"
	"testing"
)

// lineRenderer stands in for the reader's Markdown renderer: one output
// line per input line, so a test decides a page's length exactly.
func lineRenderer(md string, width int) (string, error) { return md + "\n\n", nil }

func pageOf(lines int) Page {
	return Page{Title: "T", Markdown: strings.Repeat("x\n", lines-2), Line: 7}
}

func TestPageFit(t *testing.T) {
	c := &Course{Lessons: []*Lesson{{Path: "l/lesson.md", Pages: []Page{pageOf(MaxPageLines), pageOf(MaxPageLines + 1)}}}}
	probs := PageFit(c, lineRenderer)
	if len(probs) != 1 {
		t.Fatalf("PageFit found %d problems, want 1 (only the page of %d lines): %v", len(probs), MaxPageLines+1, probs)
	}
	p := probs[0]
	if p.Path != "l/lesson.md" || p.Line != 7 || !strings.Contains(p.Msg, "page 2") || !strings.Contains(p.Msg, "45 lines") {
		t.Errorf("problem = %s, want it at l/lesson.md:7 naming page 2 and its 45 lines", p)
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
