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

// footerLines is what the reader adds under a page's text: a blank line,
// then for each checkpoint a line naming it and its prompt wrapped
// (indented by two) with a blank line after, a "Try it" line and a blank
// line when the page has @try links, and the line that names the next page
// (or the end of the lesson).
func footerLines(l *Lesson, p Page, width int) int {
	n := 1
	for _, id := range p.Checks {
		prompt := id
		if l.Quiz != nil {
			if q := l.Quiz.Question(id); q != nil {
				prompt = q.Prompt
			}
		}
		n += 1 + wrappedLines(prompt, width-2) + 1
	}
	if len(p.Tries) > 0 {
		n += 2
	}
	return n + 1
}

// wrappedLines is how many lines text takes wrapped at width, words kept
// whole.
func wrappedLines(text string, width int) int {
	lines, col := 1, 0
	for _, w := range strings.Fields(text) {
		n := ansi.StringWidth(w)
		switch {
		case col == 0:
			col = n
		case col+1+n > width:
			lines, col = lines+1, n
		default:
			col += 1 + n
		}
	}
	return lines
}

// PageFit reports every page longer than MaxPageLines lines when rendered
// at PageWidth, with what the reader shows under it (checkpoints, links,
// the next page's name). The problem names the page's heading line, so a
// writer knows where to split.
func PageFit(c *Course, render Renderer) []Problem {
	var probs []Problem
	for _, l := range c.Lessons {
		for i, p := range l.Pages {
			n, err := PageLines(p, render, PageWidth)
			n += footerLines(l, p, PageWidth)
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
