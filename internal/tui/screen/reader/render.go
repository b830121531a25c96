package reader

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

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

// renderCmd renders Markdown in the background; glamour is far too slow to
// run inside Update.
func renderCmd(st theme.Styles, k renderKey, markdown string) tea.Cmd {
	return func() tea.Msg {
		out, err := st.RenderMarkdown(markdown, k.width)
		if err != nil {
			return renderedMsg{key: k, err: fmt.Errorf("page %d of %s: %w", k.page+1, k.lesson, err)}
		}
		return renderedMsg{key: k, out: out}
	}
}
