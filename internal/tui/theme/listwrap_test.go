package theme

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestListItemsHangAndUseTheWidth: a long list item wraps as wide as a
// paragraph, its continuation lines under its text, not under the bullet.
func TestListItemsHangAndUseTheWidth(t *testing.T) {
	st := NewStyles(true, false)
	md := strings.Repeat("word ", 40) + "\n\n- " + strings.Repeat("item `code` ", 14) + "\n- short\n\n1. " + strings.Repeat("num ", 40) + "\n"
	out, err := st.RenderMarkdown(md, 60)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(ansi.Strip(out), "\n")
	para, item := 0, 0
	inItem := false
	for _, l := range lines {
		w := ansi.StringWidth(strings.TrimRight(l, " "))
		switch {
		case strings.HasPrefix(l, "  word"):
			para = max(para, w)
		case strings.HasPrefix(l, "  • item"), strings.HasPrefix(l, "  1. num"):
			inItem = true
			item = max(item, w)
		case inItem && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "  • "):
			if !strings.HasPrefix(l, "    ") {
				t.Fatalf("continuation line not under the item's text: %q\n%s", l, ansi.Strip(out))
			}
			item = max(item, w)
		}
		if w > 60 {
			t.Fatalf("line wider than 60: %q", l)
		}
	}
	if item < para-6 {
		t.Fatalf("items wrap at %d, paragraphs at %d:\n%s", item, para, ansi.Strip(out))
	}
	if !strings.Contains(ansi.Strip(out), "  • short") {
		t.Fatalf("short item changed:\n%s", ansi.Strip(out))
	}
}
