package tui

import (
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

func (r readerModel) question(id string) *quiz.Question {
	if r.lesson == nil || r.lesson.Quiz == nil {
		return nil
	}
	return r.lesson.Quiz.Question(id)
}

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
