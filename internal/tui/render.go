package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"

	"github.com/ownership-election/playground/internal/tui/theme"
)

// renderKey names one rendering of one page: the same page is rendered
// again only when the width or the style changes.
type renderKey struct {
	lesson string
	page   int
	width  int
	style  string
}

// renderedMsg carries a finished rendering back to the reader.
type renderedMsg struct {
	key renderKey
	out string
	err error
}

// glamourStyle picks glamour's standard style for the theme.
func glamourStyle(st theme.Styles) string {
	switch {
	case st.NoColor:
		return styles.NoTTYStyle
	case st.IsDark:
		return styles.DarkStyle
	default:
		return styles.LightStyle
	}
}

// renderCmd renders Markdown in the background; glamour is far too slow to
// run inside Update.
func renderCmd(k renderKey, markdown string) tea.Cmd {
	return func() tea.Msg {
		r, err := glamour.NewTermRenderer(
			glamour.WithStandardStyle(k.style),
			glamour.WithWordWrap(k.width),
		)
		if err != nil {
			return renderedMsg{key: k, err: fmt.Errorf("render page: %w", err)}
		}
		out, err := r.Render(theme.ExpandTabs(markdown))
		if err != nil {
			return renderedMsg{key: k, err: fmt.Errorf("render page %d of %s: %w", k.page+1, k.lesson, err)}
		}
		return renderedMsg{key: k, out: out}
	}
}
