package theme

import (
	"fmt"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
)

// MarkdownStyle names the glamour style these styles render Markdown with:
// dark, light, or plain when NO_COLOR is set. A rendering cached under one
// style is stale under another.
func (s Styles) MarkdownStyle() string {
	switch {
	case s.NoColor:
		return styles.NoTTYStyle
	case s.IsDark:
		return styles.DarkStyle
	default:
		return styles.LightStyle
	}
}

// RenderMarkdown renders Markdown for the terminal, wrapped to width
// cells, in the style that matches these styles, with tabs expanded to
// TabWidth. It is the one Markdown renderer of the TUI. It takes
// milliseconds a page: call it from a tea.Cmd, never from Update.
func (s Styles) RenderMarkdown(markdown string, width int) (string, error) {
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(s.MarkdownStyle()), glamour.WithWordWrap(width))
	if err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	out, err := r.Render(ExpandTabs(markdown))
	if err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	return hangListItems(out, width), nil
}
