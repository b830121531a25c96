package lessons

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The page budget: a page of the course should read on two screens of an
// 80x24 terminal without more. The reader wraps Markdown to the terminal
// width less the app's padding (78 at 80 columns; the renderer keeps a
// margin inside that, so text is at most 76 wide), and two screens of its
// viewport are about 44 lines.
const (
	PageWidth    = 76 // an 80-column terminal less the app's and the renderer's margins
	MaxPageLines = 44 // two 80x24 screens
)

// Renderer turns a page's Markdown into terminal lines at a width, as the
// reader does. The TUI's renderer lives with the theme; the check is
// handed it so that this package needs no terminal libraries.
type Renderer func(markdown string, width int) (string, error)

// Source is what the reader renders for a page: its heading, then its
// body (directives already removed).
func (p Page) Source() string {
	return "# " + p.Title + "\n\n" + p.Markdown
}

// PageLines is how many lines page p takes when rendered at width:
// code blocks, tables and the heading included, trailing blank lines not.
func PageLines(p Page, render Renderer, width int) (int, error) {
	out, err := render(p.Source(), width)
	if err != nil {
		return 0, err
	}
	out = strings.TrimRight(ansi.Strip(out), " \n")
	return strings.Count(out, "\n") + 1, nil
}

// PageFit reports every page longer than MaxPageLines lines when rendered
// at PageWidth. The problem names the page's heading line, so a writer
// knows where to split.
func PageFit(c *Course, render Renderer) []Problem {
	var probs []Problem
	for _, l := range c.Lessons {
		for i, p := range l.Pages {
			n, err := PageLines(p, render, PageWidth)
			switch {
			case err != nil:
				probs = append(probs, Problem{Path: l.Path, Line: p.Line,
					Msg: fmt.Sprintf("page %d %q: cannot render: %v", i+1, p.Title, err)})
			case n > MaxPageLines:
				probs = append(probs, Problem{Path: l.Path, Line: p.Line,
					Msg: fmt.Sprintf("page %d %q is %d lines at %d columns, more than two 80x24 screens (%d): split it into pages of its own",
						i+1, p.Title, n, PageWidth, MaxPageLines)})
			}
		}
	}
	return probs
}
