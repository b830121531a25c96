package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

type readerKeys struct {
	nav        theme.NavKeys
	Next       key.Binding
	Prev       key.Binding
	Check      key.Binding
	Quiz       key.Binding
	Lab        key.Binding
	Experiment key.Binding
	Close      key.Binding // leave a checkpoint
}

func defaultReaderKeys() readerKeys {
	return readerKeys{
		nav:        theme.DefaultNavKeys(),
		Next:       key.NewBinding(key.WithKeys("right", "n"), key.WithHelp("→/n", "next page")),
		Prev:       key.NewBinding(key.WithKeys("left", "p"), key.WithHelp("←/p", "previous page")),
		Check:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "checkpoint")),
		Quiz:       key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "lesson quiz")),
		Lab:        key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "lab")),
		Experiment: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "experiment")),
		Close:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the page")),
	}
}

// readerModel is the lesson reader: one page at a time, rendered by
// glamour in the background and cached per page and width, scrollable,
// with the page's checkpoint questions asked in place.
type readerModel struct {
	styles  theme.Styles
	keys    readerKeys
	learner string
	w, h    int

	lesson *lessons.Lesson
	page   int
	vp     viewport.Model // scroll position over lines
	lines  []string       // the page as shown: rendering (or plain text) and footer
	shown  renderKey      // what lines holds; zero when the fallback is shown

	cache   map[renderKey]string
	pending map[renderKey]bool
	failed  string // last rendering error, shown above the plain text

	answered map[string]bool // checkpoint question ids answered correctly
	check    *questionModel  // the open checkpoint, nil when reading
	checkIdx int             // which of the page's checks is open
	checkVP  viewport.Model  // the checkpoint's question and feedback
}

func newReader(st theme.Styles) readerModel {
	vp := viewport.New()
	vp.MouseWheelEnabled = true
	return readerModel{
		styles:   st,
		keys:     defaultReaderKeys(),
		vp:       vp,
		cache:    map[renderKey]string{},
		pending:  map[renderKey]bool{},
		answered: map[string]bool{},
		checkVP:  viewport.New(),
	}
}

func (r *readerModel) setStyles(st theme.Styles) {
	r.styles = st
	r.shown = renderKey{}
	r.refreshContent()
	if r.check != nil {
		r.check.styles = st
		r.refreshCheck()
	}
}

// sidebar is the page list shown beside the text on wide terminals.
func (r readerModel) sidebarWidth() int {
	switch {
	case r.w >= 160:
		return 40
	case r.w >= 120:
		return 30
	}
	return 0
}

// textWidth is the width Markdown is wrapped to: the whole body on small
// terminals, a comfortable reading measure on large ones.
func (r readerModel) textWidth() int {
	w := r.w
	if sw := r.sidebarWidth(); sw > 0 {
		w -= sw + 3
	}
	return max(min(w, 100), 20)
}

func (r *readerModel) setSize(w, h int) {
	r.w, r.h = w, h
	r.vp.SetWidth(r.textWidth())
	r.vp.SetHeight(max(h-1, 1)) // one line for the page heading bar
	r.checkVP.SetWidth(r.textWidth())
	r.checkVP.SetHeight(max(h-1, 1))
	r.refreshContent()
	r.refreshCheck()
}

// open shows lesson l at page (or where the learner left off when page is
// negative).
func (r *readerModel) open(l *lessons.Lesson, page int, p *progress.Progress) tea.Cmd {
	r.lesson = l
	r.check = nil
	clear(r.answered)
	if rec := p.Peek(l.ID); rec != nil {
		if page < 0 {
			page = rec.LastPage
		}
		for id, a := range rec.Checks {
			if a.Correct {
				r.answered[id] = true
			}
		}
	}
	return r.goTo(max(page, 0))
}

func (r *readerModel) goTo(page int) tea.Cmd {
	if r.lesson == nil || len(r.lesson.Pages) == 0 {
		return nil
	}
	page = min(max(page, 0), len(r.lesson.Pages)-1)
	r.page = page
	r.check = nil
	r.shown = renderKey{}
	r.refreshContent()
	r.vp.GotoTop()
	shown := send(pageShownMsg{lesson: r.lesson.ID, page: page})
	return tea.Batch(shown, r.ensureRendered())
}

func (r readerModel) key(page int) renderKey {
	return renderKey{lesson: r.lesson.ID, page: page, width: r.textWidth(), style: glamourStyle(r.styles)}
}

func pageMarkdown(p lessons.Page) string {
	return "# " + p.Title + "\n\n" + p.Markdown
}

// ensureRendered asks for the current page and its neighbours at the
// current width, unless cached or already on the way. Rendering the
// neighbours ahead makes paging instant.
func (r *readerModel) ensureRendered() tea.Cmd {
	if r.lesson == nil {
		return nil
	}
	var cmds []tea.Cmd
	for _, p := range []int{r.page, r.page + 1, r.page - 1} {
		if p < 0 || p >= len(r.lesson.Pages) {
			continue
		}
		k := r.key(p)
		if _, ok := r.cache[k]; ok || r.pending[k] {
			continue
		}
		r.pending[k] = true
		cmds = append(cmds, renderCmd(k, pageMarkdown(r.lesson.Pages[p])))
	}
	return tea.Batch(cmds...)
}

// refreshContent puts the current page into the viewport: the rendering
// when cached, otherwise the plain Markdown wrapped, so the page is
// readable from the first frame.
func (r *readerModel) refreshContent() {
	if r.lesson == nil || len(r.lesson.Pages) == 0 {
		return
	}
	k := r.key(r.page)
	if k == r.shown {
		return
	}
	body, ok := r.cache[k]
	if ok {
		body = strings.Trim(body, "\n")
		r.shown = k
	} else {
		p := r.lesson.Pages[r.page]
		body = r.styles.Heading.Render(p.Title) + "\n\n" + r.styles.Text.Render(wrap(p.Markdown, r.textWidth()))
		if r.failed != "" {
			body = r.styles.Error.Render(wrap(r.failed, r.textWidth())) + "\n\n" + body
		}
	}
	off := r.vp.YOffset()
	r.lines = strings.Split(body+"\n\n"+r.footer(), "\n")
	r.vp.SetContentLines(r.lines)
	r.vp.SetYOffset(off)
}

// footer lists the page's checkpoints and "try it" links.
func (r readerModel) footer() string {
	st := r.styles
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
		if r.answered[id] {
			mark = st.Success.Render("✓ ")
			state = "answered; c to try again"
		}
		label := "Checkpoint"
		if len(p.Checks) > 1 {
			label = fmt.Sprintf("Checkpoint %d", i+1)
		}
		b.WriteString(mark + st.Heading.Render(label) + st.Muted.Render(" · "+state) + "\n")
		b.WriteString(st.Text.Render(hangIndent("  ", oneParagraph(q.Prompt), w)) + "\n\n")
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
	} else {
		next := r.lesson.Pages[r.page+1].Title
		b.WriteString(st.Muted.Render(truncate("Next: "+next+"  (→ or n)", w)) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (r readerModel) question(id string) *quiz.Question {
	if r.lesson == nil || r.lesson.Quiz == nil {
		return nil
	}
	return r.lesson.Quiz.Question(id)
}

func (r readerModel) checkOpen() bool { return r.check != nil }

func (r readerModel) typing() bool { return r.check != nil && r.check.typing() }

func (r readerModel) Update(msg tea.Msg) (readerModel, tea.Cmd) {
	switch msg := msg.(type) {
	case renderedMsg:
		delete(r.pending, msg.key)
		if msg.err != nil {
			r.failed = msg.err.Error()
		} else {
			r.evict(msg.key.width)
			r.cache[msg.key] = msg.out
		}
		r.refreshContent()
		return r, nil
	case tea.MouseWheelMsg:
		var cmd tea.Cmd
		r.vp, cmd = r.vp.Update(msg)
		return r, cmd
	case tea.KeyPressMsg:
		if r.lesson == nil {
			return r, nil
		}
		if r.check != nil {
			return r.updateCheck(msg)
		}
		return r.handleKey(msg)
	}
	return r, nil
}

func (r readerModel) handleKey(k tea.KeyPressMsg) (readerModel, tea.Cmd) {
	p := r.lesson.Pages[r.page]
	switch {
	case key.Matches(k, r.keys.Next):
		if r.page+1 < len(r.lesson.Pages) {
			return r, r.goTo(r.page + 1)
		}
	case key.Matches(k, r.keys.Prev):
		if r.page > 0 {
			return r, r.goTo(r.page - 1)
		}
	case key.Matches(k, r.keys.nav.Down):
		r.vp.ScrollDown(1)
	case key.Matches(k, r.keys.nav.Up):
		r.vp.ScrollUp(1)
	case key.Matches(k, r.keys.nav.PageDown):
		r.vp.PageDown()
	case key.Matches(k, r.keys.nav.PageUp):
		r.vp.PageUp()
	case key.Matches(k, r.keys.nav.Top):
		r.vp.GotoTop()
	case key.Matches(k, r.keys.nav.Bottom):
		r.vp.GotoBottom()
	case key.Matches(k, r.keys.Check):
		for i, id := range p.Checks {
			if q := r.question(id); q != nil {
				r.openCheck(i, q)
				return r, nil
			}
		}
	case key.Matches(k, r.keys.Quiz):
		return r, send(openQuizMsg{lesson: r.lesson.ID})
	case key.Matches(k, r.keys.Lab):
		if lab := r.firstTry(lessons.TryLab, r.lesson.Labs); lab != "" {
			return r, send(openLabMsg{lab: lab})
		}
	case key.Matches(k, r.keys.Experiment):
		if e := r.firstTry(lessons.TryExperiment, r.lesson.Experiments); e != "" {
			return r, send(openExperimentMsg{name: e})
		}
	}
	return r, nil
}

// firstTry is the page's first link of a kind, else the lesson's first.
func (r readerModel) firstTry(kind lessons.TryKind, fallback []string) string {
	for _, t := range r.lesson.Pages[r.page].Tries {
		if t.Kind == kind {
			return t.Name
		}
	}
	if len(fallback) > 0 {
		return fallback[0]
	}
	return ""
}

func (r *readerModel) openCheck(i int, q *quiz.Question) {
	qm := newQuestion(q, r.learner, r.styles)
	r.check, r.checkIdx = &qm, i
	r.refreshCheck()
	r.checkVP.GotoTop()
}

// refreshCheck puts the open checkpoint into its viewport.
func (r *readerModel) refreshCheck() {
	if r.check == nil {
		return
	}
	tw := r.textWidth()
	body := r.check.View(tw)
	if r.check.answered() {
		if e := r.check.q.Experiment; e != "" {
			body += "\n\n" + r.styles.Accent.Render("x") + r.styles.Text.Render(" runs the experiment "+e+" to see what really happens.")
		}
		body += "\n\n" + r.styles.Muted.Render("enter continues · esc back to the page")
	}
	r.checkVP.SetContent(body)
}

func (r readerModel) updateCheck(k tea.KeyPressMsg) (readerModel, tea.Cmd) {
	p := r.lesson.Pages[r.page]
	if r.check.answered() {
		switch {
		case key.Matches(k, r.keys.nav.Down):
			r.checkVP.ScrollDown(1)
		case key.Matches(k, r.keys.nav.Up):
			r.checkVP.ScrollUp(1)
		case key.Matches(k, r.keys.nav.PageDown):
			r.checkVP.PageDown()
		case key.Matches(k, r.keys.nav.PageUp):
			r.checkVP.PageUp()
		case key.Matches(k, r.keys.Experiment) && r.check.q.Experiment != "":
			return r, send(openExperimentMsg{name: r.check.q.Experiment})
		}
		if key.Matches(k, r.keys.Close) || key.Matches(k, r.check.keys.Submit) {
			// Next checkpoint of the page, or back to the text.
			for i := r.checkIdx + 1; i < len(p.Checks); i++ {
				if q := r.question(p.Checks[i]); q != nil {
					r.openCheck(i, q)
					return r, nil
				}
			}
			r.check = nil
			r.shown = renderKey{}
			r.refreshContent()
		}
		return r, nil
	}
	if key.Matches(k, r.keys.Close) {
		r.check = nil
		return r, nil
	}
	qm, submitted := r.check.Update(k)
	r.check = &qm
	r.refreshCheck()
	if !submitted {
		return r, nil
	}
	r.checkVP.GotoTop()
	q := qm.q
	if qm.result.Correct {
		r.answered[q.ID] = true
	}
	ans := progress.Answer{Response: responseText(q, *qm.response), Score: qm.result.Score, Correct: qm.result.Correct}
	return r, send(checkAnsweredMsg{lesson: r.lesson.ID, question: q.ID, answer: ans})
}

// title is the lesson's name for the top line.
func (r readerModel) title() string {
	if r.lesson == nil {
		return ""
	}
	return fmt.Sprintf("%02d %s", r.lesson.Number, r.lesson.Title)
}

// position is "page k/n · s%" for the status line.
func (r readerModel) position() string {
	if r.lesson == nil {
		return ""
	}
	s := fmt.Sprintf("page %d/%d", r.page+1, len(r.lesson.Pages))
	if r.check != nil {
		return s + " · checkpoint"
	}
	return s + fmt.Sprintf(" · %d%%", percent(r.vp))
}

func (r readerModel) View() string {
	if r.lesson == nil || len(r.lesson.Pages) == 0 {
		return r.styles.Muted.Render("This lesson has no pages.")
	}
	st := r.styles
	tw := r.textWidth()
	var text string
	if r.check != nil {
		label := "Checkpoint"
		if n := len(r.lesson.Pages[r.page].Checks); n > 1 {
			label = fmt.Sprintf("Checkpoint %d/%d", r.checkIdx+1, n)
		}
		head := st.Badge.Render(label) + st.Muted.Render(" · "+r.lesson.Pages[r.page].Title)
		text = truncate(head, tw) + "\n" + r.checkVP.View()
	} else {
		text = r.pageBar(tw) + "\n" + window(r.lines, r.vp.YOffset(), r.vp.Height())
	}
	if sw := r.sidebarWidth(); sw > 0 {
		return columns(r.h, st.Muted.Render(" │ "), block{r.sidebar(sw), sw}, block{text, tw})
	}
	return text
}

// pageBar is the line above the text: dots for the pages, the current one
// highlighted, read ones filled.
func (r readerModel) pageBar(w int) string {
	st := r.styles
	var b strings.Builder
	for i := range r.lesson.Pages {
		switch {
		case i == r.page:
			b.WriteString(st.Accent.Render("●"))
		default:
			b.WriteString(st.Muted.Render("○"))
		}
	}
	label := fmt.Sprintf(" page %d of %d", r.page+1, len(r.lesson.Pages))
	return truncate(b.String()+st.Muted.Render(label), w)
}

func (r readerModel) sidebar(w int) string {
	st := r.styles
	var b strings.Builder
	b.WriteString(st.Heading.Render("Pages") + "\n")
	for i, p := range r.lesson.Pages {
		line := truncate(fmt.Sprintf("%d. %s", i+1, p.Title), w-2)
		if i == r.page {
			b.WriteString(st.Cursor.Render("› ") + st.Selected.Render(line) + "\n")
		} else {
			b.WriteString("  " + st.Text.Render(line) + "\n")
		}
	}
	var more []string
	if r.lesson.Quiz != nil && len(r.lesson.Quiz.Questions) > 0 {
		more = append(more, st.Accent.Render("t")+st.Text.Render(fmt.Sprintf(" quiz (%d questions)", len(r.lesson.Quiz.Questions))))
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
			b.WriteString(truncate(s, w) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func (r readerModel) ShortHelp() []key.Binding {
	if r.check != nil {
		if r.check.answered() {
			cont := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "continue"))
			return []key.Binding{cont, r.keys.nav.Down, r.keys.Close}
		}
		return append(r.check.ShortHelp(), r.keys.Close)
	}
	return []key.Binding{r.keys.Prev, r.keys.Next, r.keys.nav.Down, r.keys.Check, r.keys.Quiz, r.keys.Lab}
}

func (r readerModel) FullHelp() [][]key.Binding {
	if r.check != nil {
		return append(r.check.FullHelp(), []key.Binding{r.keys.Close})
	}
	return [][]key.Binding{
		{r.keys.Prev, r.keys.Next},
		{r.keys.nav.Up, r.keys.nav.Down, r.keys.nav.PageUp, r.keys.nav.PageDown, r.keys.nav.Top, r.keys.nav.Bottom},
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

// oneParagraph joins the lines of a prompt written over several YAML lines.
func oneParagraph(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// evict keeps the cache from growing without bound while a terminal is
// resized many times: past a few dozen pages, renderings for other widths go.
func (r *readerModel) evict(width int) {
	if len(r.cache) < 64 {
		return
	}
	for k := range r.cache {
		if k.width != width {
			delete(r.cache, k)
		}
	}
}
