package reader

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"

	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/lessons"
)

// title is the lesson's name for the top line.
// Title is the lesson's number and name.
func (r *Model) Title() string {
	if r.lesson == nil {
		return ""
	}
	return fmt.Sprintf("%02d %s", r.lesson.Number, r.lesson.Title)
}

// position is "page k/n · s%" for the status line.
// Status is the position: page, and how far down it or the checkpoint.
func (r *Model) Status() string {
	if r.lesson == nil {
		return ""
	}
	s := fmt.Sprintf("page %d/%d", r.page+1, len(r.lesson.Pages))
	if r.check != nil {
		return s + " · checkpoint"
	}
	return s + fmt.Sprintf(" · %d%%", percent(r.vp))
}

// View draws the page (or the open checkpoint), with the page list beside
// it on wide terminals.
func (r *Model) View() string {
	if r.lesson == nil || len(r.lesson.Pages) == 0 {
		return r.Styles.Muted.Render("This lesson has no pages.")
	}
	st := r.Styles
	tw := r.textWidth()
	var page string
	if r.check != nil {
		label := "Checkpoint"
		if n := len(r.lesson.Pages[r.page].Checks); n > 1 {
			label = fmt.Sprintf("Checkpoint %d/%d", r.checkIdx+1, n)
		}
		head := st.Badge.Render(label) + st.Muted.Render(" · "+r.lesson.Pages[r.page].Title)
		page = text.Truncate(head, tw) + "\n" + r.checkVP.View()
	} else {
		page = r.pageBar(tw) + "\n" + text.Window(r.lines, r.vp.YOffset(), r.vp.Height())
	}
	if sw := r.sidebarWidth(); sw > 0 {
		return text.Columns(r.Height, st.Muted.Render(" │ "), text.Block{Text: r.sidebar(sw), W: sw}, text.Block{Text: page, W: tw})
	}
	return page
}

// pageBar is the line above the text: dots for the pages, the current one
// marked (◉), read ones filled (●), the others open (○); the marks say it
// without colour too.
func (r Model) pageBar(w int) string {
	st := r.Styles
	var b strings.Builder
	for i := range r.lesson.Pages {
		switch {
		case i == r.page:
			b.WriteString(st.Accent.Render("◉"))
		case r.read[i]:
			b.WriteString(st.Muted.Render("●"))
		default:
			b.WriteString(st.Muted.Render("○"))
		}
	}
	label := fmt.Sprintf(" page %d of %d", r.page+1, len(r.lesson.Pages))
	return text.Truncate(b.String()+st.Muted.Render(label), w)
}

func (r Model) sidebar(w int) string {
	st := r.Styles
	var b strings.Builder
	b.WriteString(st.Heading.Render("Pages") + "\n")
	for i, p := range r.lesson.Pages {
		line := text.Truncate(fmt.Sprintf("%d. %s", i+1, p.Title), w-2)
		if i == r.page {
			b.WriteString(st.Cursor.Render("› ") + st.Selected.Render(line) + "\n")
		} else {
			b.WriteString("  " + st.Text.Render(line) + "\n")
		}
	}
	var more []string
	if r.lesson.Quiz != nil && len(r.lesson.QuizQuestions()) > 0 {
		more = append(more, st.Accent.Render("t")+st.Text.Render(fmt.Sprintf(" quiz (%d questions)", len(r.lesson.QuizQuestions()))))
	}
	for _, l := range r.lesson.Labs {
		more = append(more, st.Accent.Render("l")+st.Text.Render(" lab "+l))
	}
	for _, e := range r.lesson.Experiments {
		more = append(more, st.Accent.Render("x")+st.Text.Render(" "+e))
	}
	if len(more) > 0 {
		b.WriteString("\n" + st.Heading.Render("Practice") + "\n")
		for _, s := range more {
			b.WriteString(text.Truncate(s, w) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// ShortHelp is the one-line key help.
func (r *Model) ShortHelp() []key.Binding {
	if r.check != nil {
		if r.check.Answered() {
			cont := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "continue"))
			return []key.Binding{cont, r.keys.Down, r.keys.Close}
		}
		return append(r.check.ShortHelp(), r.keys.Close)
	}
	return []key.Binding{r.keys.Prev, r.keys.Next, r.keys.Down, r.keys.Check, r.keys.Quiz, r.keys.Lab}
}

// FullHelp is every key of the reader.
func (r *Model) FullHelp() [][]key.Binding {
	if r.check != nil {
		return append(r.check.FullHelp(), []key.Binding{r.keys.Close})
	}
	return [][]key.Binding{
		{r.keys.Prev, r.keys.Next},
		{r.keys.Up, r.keys.Down, r.keys.PageUp, r.keys.PageDown, r.keys.Top, r.keys.Bottom},
		{r.keys.Check, r.keys.Quiz, r.keys.Lab, r.keys.Experiment},
	}
}

// percent is how far down the text the view is; a page that fits whole
// counts as fully seen.
func percent(vp viewport.Model) int {
	if vp.TotalLineCount() <= vp.Height() {
		return 100
	}
	return int(vp.ScrollPercent()*100 + 0.5)
}

// footer lists the page's checkpoints and "try it" links.
func (r Model) footer() string {
	st := r.Styles
	p := r.lesson.Pages[r.page]
	w := r.textWidth()
	var b strings.Builder
	for i, id := range p.Checks {
		q := r.question(id)
		if q == nil {
			continue
		}
		mark := st.Accent.Render("? ")
		state := "press c to answer"
		if a, ok := r.answered[id]; ok {
			switch {
			case a.Correct:
				mark, state = st.Success.Render("✓ "), "answered right; c to try again"
			case a.Score > 0:
				mark = st.Warning.Render("◐ ")
				state = fmt.Sprintf("partly right (%d%%); c to try again", int(a.Score*100+0.5))
			default:
				mark, state = st.Error.Render("✗ "), "answered wrong; c to try again"
			}
		}
		label := "Checkpoint"
		if len(p.Checks) > 1 {
			label = fmt.Sprintf("Checkpoint %d", i+1)
		}
		b.WriteString(mark + st.Heading.Render(label) + st.Muted.Render(" · "+state) + "\n")
		b.WriteString(st.Text.Render(text.Hang("  ", text.Inline(strings.Join(strings.Fields(q.Prompt), " ")), w)) + "\n\n")
	}
	var tries []string
	for _, t := range p.Tries {
		switch t.Kind {
		case lessons.TryLab:
			tries = append(tries, st.Accent.Render("l")+" lab "+t.Name)
		case lessons.TryExperiment:
			tries = append(tries, st.Accent.Render("x")+" experiment "+t.Name)
		}
	}
	if len(tries) > 0 {
		b.WriteString(st.Heading.Render("Try it") + st.Muted.Render(": ") + strings.Join(tries, st.Muted.Render(" · ")) + "\n\n")
	}
	if r.page == len(r.lesson.Pages)-1 {
		b.WriteString(st.Muted.Render("End of the lesson. ") + st.Accent.Render("t") + st.Muted.Render(" takes the lesson's quiz.") + "\n")
		if r.next != nil {
			next := fmt.Sprintf("Next lesson: %02d %s  (→ or n)", r.next.Number, r.next.Title)
			b.WriteString(st.Muted.Render(text.Truncate(next, w)) + "\n")
		}
	} else {
		next := r.lesson.Pages[r.page+1].Title
		b.WriteString(st.Muted.Render(text.Truncate("Next: "+next+"  (→ or n)", w)) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
