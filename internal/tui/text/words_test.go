package text

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestWrapKeepsHyphenatedNames: text wraps between words only, never at
// the hyphen of a key's name, and a clamped text ends after a word.
func TestWrapKeepsHyphenatedNames(t *testing.T) {
	got := ClampWords("With the versioned unlock, P1's unlock was refused: lock-versioned's ModRevision is 10, not 8", 40, 0)
	for _, l := range got {
		if strings.HasSuffix(l, "-") || ansi.StringWidth(l) > 40 {
			t.Fatalf("line %q of %q", l, got)
		}
	}
	got = ClampWords("one two three four five six seven eight nine ten eleven", 20, 2)
	if len(got) != 2 || got[1] != "five six seven…" {
		t.Fatalf("clamped: %q", got)
	}
}
