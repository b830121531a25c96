// Package reader is the lesson reader: one page at a time, rendered by
// glamour in the background and cached per page and width, scrollable,
// with the page's checkpoint questions asked in place and keys to the
// lesson's quiz, lab and experiment.
package reader

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	quizscreen "github.com/ownership-election/playground/internal/tui/screen/quiz"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

// KeyMap is the reader's bindings.
type KeyMap struct {
	theme.NavKeys
	Next       key.Binding
	Prev       key.Binding
	Check      key.Binding
	Quiz       key.Binding
	Lab        key.Binding
	Experiment key.Binding
	Close      key.Binding // leave a checkpoint
}

// DefaultKeyMap returns the reader's bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeys:    theme.DefaultNavKeys(),
		Next:       key.NewBinding(key.WithKeys("right", "n"), key.WithHelp("→/n", "next page")),
		Prev:       key.NewBinding(key.WithKeys("left", "p"), key.WithHelp("←/p", "previous page")),
		Check:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "checkpoint")),
		Quiz:       key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "lesson quiz")),
		Lab:        key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "lab")),
		Experiment: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "experiment")),
		Close:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the page")),
	}
}

// Model is the lesson reader: one page at a time, rendered by
// glamour in the background and cached per page and width, scrollable,
// with the page's checkpoint questions asked in place.
type Model struct {
	screen.Base
	keys    KeyMap
	learner string

	lesson *lessons.Lesson
	next   *lessons.Lesson // the lesson after, offered on the last page
	page   int
	vp     viewport.Model // scroll position over lines
	lines  []string       // the page as shown: rendering (or plain text) and footer
	shown  renderKey      // what lines holds; zero when the fallback is shown

	cache   map[renderKey]string
	pending map[renderKey]bool
	failed  string // last rendering error, shown above the plain text

	answered map[string]progress.Answer // the latest answer to each checkpoint, by question id
	read     map[int]bool               // pages read: saved ones, and each shown since (PageShown marks it)
	check    *quizscreen.Question       // the open checkpoint, nil when reading
	checkIdx int                        // which of the page's checks is open
	checkVP  viewport.Model             // the checkpoint's question and feedback
}

// Options configure the reader.
type Options struct {
	// Lesson is the lesson to read.
	Lesson *lessons.Lesson
	// Page is the page to open at; negative opens the page where the
	// learner left off.
	Page int
	// Next is the lesson after this one in the course, offered on the
	// last page (→ opens it); nil for the last lesson.
	Next *lessons.Lesson
}

// New opens opts.Lesson at opts.Page.
func New(ctx screen.Context, opts Options) *Model {
	l, page := opts.Lesson, opts.Page
	vp := viewport.New()
	vp.MouseWheelEnabled = true
	r := &Model{
		Base:     screen.NewBase(ctx),
		keys:     DefaultKeyMap(),
		learner:  ctx.Learner,
		vp:       vp,
		cache:    map[renderKey]string{},
		pending:  map[renderKey]bool{},
		answered: map[string]progress.Answer{},
		read:     map[int]bool{},
		checkVP:  viewport.New(),
		lesson:   l,
		next:     opts.Next,
		page:     page,
	}
	if rec := ctx.Progress.Peek(l.ID); rec != nil {
		if r.page < 0 {
			r.page = rec.LastPage
		}
		for id, a := range rec.Checks {
			r.answered[id] = a
		}
		for _, pg := range rec.PagesRead {
			r.read[pg] = true
		}
	}
	r.page = max(r.page, 0)
	return r
}

var _ screen.Screen = (*Model)(nil)

// Init shows the page: it records it as read and starts its rendering.
func (r *Model) Init() tea.Cmd { return r.goTo(r.page) }

// SetStyles replaces the styles; pages are rendered again in the new ones.
func (r *Model) SetStyles(st theme.Styles) {
	r.Base.SetStyles(st)
	r.shown = renderKey{}
	r.refreshContent()
	if r.check != nil {
		r.check.SetStyles(st)
		r.refreshCheck()
	}
}

// Capturing: esc closes an open checkpoint before it leaves the lesson.
func (r *Model) Capturing() bool { return r.check != nil }

// Typing: a checkpoint that asks for a number takes ? and q as text.
func (r *Model) Typing() bool { return r.check != nil && r.check.Typing() }

// Update handles keys and finished renderings; a size or colour change
// asks for renderings at the new width.
func (r *Model) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg.(type) {
	case tea.WindowSizeMsg, tea.BackgroundColorMsg:
		return r, r.ensureRendered()
	}
	next, cmd := r.update(msg)
	*r = next
	return r, cmd
}

// sidebar is the page list shown beside the text on wide terminals.
func (r Model) sidebarWidth() int {
	switch {
	case r.Width >= 160:
		return 40
	case r.Width >= 120:
		return 30
	}
	return 0
}

// textWidth is the width Markdown is wrapped to: the whole body on small
// terminals, a comfortable reading measure on large ones.
func (r Model) textWidth() int {
	w := r.Width
	if sw := r.sidebarWidth(); sw > 0 {
		w -= sw + 3
	}
	return max(min(w, 100), 20)
}

// SetSize gives the reader its area.
func (r *Model) SetSize(w, h int) {
	r.Base.SetSize(w, h)
	r.vp.SetWidth(r.textWidth())
	r.vp.SetHeight(max(h-1, 1)) // one line for the page heading bar
	r.checkVP.SetWidth(r.textWidth())
	r.checkVP.SetHeight(max(h-1, 1))
	r.refreshContent()
	r.refreshCheck()
}

func (r *Model) goTo(page int) tea.Cmd {
	if r.lesson == nil || len(r.lesson.Pages) == 0 {
		return nil
	}
	page = min(max(page, 0), len(r.lesson.Pages)-1)
	r.page = page
	r.read[page] = true // the root marks it read on PageShown
	r.check = nil
	r.shown = renderKey{}
	r.refreshContent()
	r.vp.GotoTop()
	shown := screen.Send(screen.PageShown{Lesson: r.lesson.ID, Page: page})
	return tea.Batch(shown, r.ensureRendered())
}

func (r Model) key(page int) renderKey {
	return renderKey{lesson: r.lesson.ID, page: page, width: r.textWidth(), style: r.Styles.MarkdownStyle()}
}

func pageMarkdown(p lessons.Page) string {
	return "# " + p.Title + "\n\n" + p.Markdown
}

// ensureRendered asks for the current page and its neighbours at the
// current width, unless cached or already on the way. Rendering the
// neighbours ahead makes paging instant.
func (r *Model) ensureRendered() tea.Cmd {
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
		cmds = append(cmds, renderCmd(r.Styles, k, pageMarkdown(r.lesson.Pages[p])))
	}
	return tea.Batch(cmds...)
}

// refreshContent puts the current page into the viewport: the rendering
// when cached, otherwise the plain Markdown wrapped, so the page is
// readable from the first frame.
func (r *Model) refreshContent() {
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
		body = r.Styles.Heading.Render(p.Title) + "\n\n" + r.Styles.Text.Render(text.Wrap(p.Markdown, r.textWidth()))
		if r.failed != "" {
			body = r.Styles.Error.Render(text.Wrap(r.failed, r.textWidth())) + "\n\n" + body
		}
	}
	off := r.vp.YOffset()
	r.lines = strings.Split(body+"\n\n"+r.footer(), "\n")
	r.vp.SetContentLines(r.lines)
	r.vp.SetYOffset(off)
}

func (r Model) question(id string) *quiz.Question {
	if r.lesson == nil || r.lesson.Quiz == nil {
		return nil
	}
	return r.lesson.Quiz.Question(id)
}

func (r Model) update(msg tea.Msg) (Model, tea.Cmd) {
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

func (r Model) handleKey(k tea.KeyPressMsg) (Model, tea.Cmd) {
	p := r.lesson.Pages[r.page]
	switch {
	case key.Matches(k, r.keys.Next):
		if r.page+1 < len(r.lesson.Pages) {
			return r, r.goTo(r.page + 1)
		}
		if r.next != nil {
			return r, screen.Send(screen.OpenLesson{Lesson: r.next.ID, Page: 0})
		}
	case key.Matches(k, r.keys.Prev):
		if r.page > 0 {
			return r, r.goTo(r.page - 1)
		}
	case r.keys.Scroll(&r.vp, k):
	case key.Matches(k, r.keys.Check):
		for i, id := range p.Checks {
			if q := r.question(id); q != nil {
				r.openCheck(i, q)
				return r, nil
			}
		}
	case key.Matches(k, r.keys.Quiz):
		return r, screen.Send(screen.OpenQuiz{Lesson: r.lesson.ID})
	case key.Matches(k, r.keys.Lab):
		if lab := r.firstTry(lessons.TryLab, r.lesson.Labs); lab != "" {
			return r, screen.Send(screen.OpenLab{Lab: lab})
		}
	case key.Matches(k, r.keys.Experiment):
		if e := r.firstTry(lessons.TryExperiment, r.lesson.Experiments); e != "" {
			return r, screen.Send(screen.OpenExperiment{Name: e})
		}
	}
	return r, nil
}

// firstTry is the page's first link of a kind, else the lesson's first.
func (r Model) firstTry(kind lessons.TryKind, fallback []string) string {
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

// evict keeps the cache from growing without bound while a terminal is
// resized many times: past a few dozen pages, renderings for other widths go.
func (r *Model) evict(width int) {
	if len(r.cache) < 64 {
		return
	}
	for k := range r.cache {
		if k.width != width {
			delete(r.cache, k)
		}
	}
}

// Rendered returns the glamour rendering of page at the current width and
// style, and whether it is ready (rendering runs in the background).
func (r *Model) Rendered(page int) (string, bool) {
	out, ok := r.cache[r.key(page)]
	return out, ok
}

// TextWidth is the width pages are wrapped to.
func (r *Model) TextWidth() int { return r.textWidth() }
