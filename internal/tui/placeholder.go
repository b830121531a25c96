package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
)

// placeholder is the screen shown for a lab or an experiment when the
// screen that runs it is not available: it says how to do it by hand.
type placeholder struct {
	styles theme.Styles
	title  string
	body   string
	w, h   int
	back   key.Binding
}

func newPlaceholder(st theme.Styles, title, body string) *placeholder {
	return &placeholder{styles: st, title: title, body: body,
		back: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))}
}

func (p *placeholder) Update(tea.Msg) (Screen, tea.Cmd) { return p, nil }
func (p *placeholder) SetSize(w, h int)                 { p.w, p.h = w, h }
func (p *placeholder) SetStyles(st theme.Styles)        { p.styles = st }
func (p *placeholder) Capturing() bool                  { return false }
func (p *placeholder) Close()                           {}
func (p *placeholder) ShortHelp() []key.Binding         { return []key.Binding{p.back} }
func (p *placeholder) FullHelp() [][]key.Binding        { return [][]key.Binding{{p.back}} }

func (p *placeholder) View() string {
	return p.styles.Title.Render(p.title) + "\n\n" + p.styles.Text.Render(wrap(p.body, p.w))
}

func labHowTo(lab *lessons.Lab) string {
	var b strings.Builder
	if lab.Title != "" && lab.Title != lab.ID {
		fmt.Fprintf(&b, "%s.\n\n", lab.Title)
	}
	fmt.Fprintf(&b, "Labs are Go code you write in your own editor and grade with go test. "+
		"They live in the course repository, not in the installed program. To work on this one:\n\n"+
		"  git clone https://github.com/ownership-election/playground\n"+
		"  cd playground\n"+
		"  go run ./cmd/playground      # then open the lab from its lesson\n\n"+
		"or grade it directly with: go test ./labs/%s/", lab.ID)
	return b.String()
}

func experimentHowTo(name string) string {
	return fmt.Sprintf("The live view of this experiment is not part of this build yet. "+
		"Run it in a terminal with:\n\n  playground experiment run %s\n\n"+
		"It prints every event (lease granted, write rejected, ...) and a verdict at the end.", name)
}
