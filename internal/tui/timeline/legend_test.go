package timeline

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/internal/tui/timeline/timelinetest"
)

// TestLegendNamesEveryMark: the lanes draw ◆ where a replica won and its
// token does not fit; every legend form that fits an 80-column screen
// (78 cells inside the chrome) names it, and every other mark but the
// plain line, with and without a raft leader move.
func TestLegendNamesEveryMark(t *testing.T) {
	for _, forms := range [][]string{legend, legendMoves} {
		for _, w := range []int{78, 60} {
			got := text.FirstFit(w, forms...)
			if ansi.StringWidth(got) > w {
				t.Errorf("at %d cells the legend is cut: %q", w, got)
			}
			for _, mark := range []string{"━", "◆", "▒", "░", "×", "✓", "✗", "!"} {
				if !strings.Contains(got, mark+" ") {
					t.Errorf("at %d cells the legend %q does not name %s", w, got, mark)
				}
			}
		}
	}
	m := OfHistory(theme.NewStyles(true, false), timelinetest.FencingEvents(), false, -1)
	m.SetSize(78, 20)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "◆ won") {
		t.Errorf("the panel at 78 cells has no ◆ in its legend:\n%s", v)
	}
}
