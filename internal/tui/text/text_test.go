package text

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestFitPadsAndCuts(t *testing.T) {
	got := Fit("abcdef\nxy\n1\n2\n3", 4, 3)
	if got != "abcd\nxy\n1" {
		t.Fatalf("fit = %q", got)
	}
	if got := Fit("a", 3, 3); got != "a\n\n" {
		t.Fatalf("fit short = %q", got)
	}
	// Styled text is cut by cells, not bytes.
	s := "\x1b[1mhello world\x1b[m"
	if w := ansi.StringWidth(Fit(s, 5, 1)); w != 5 {
		t.Fatalf("styled fit width %d, want 5", w)
	}
}

func TestColumnsAlign(t *testing.T) {
	got := Columns(3, "|", Block{Text: "ab\nabcdef", W: 4}, Block{Text: "x\ny\nz", W: 2})
	want := "ab  |x\nabcd|y\n    |z"
	if got != want {
		t.Fatalf("columns =\n%s\nwant\n%s", got, want)
	}
}

func TestWindowClampsOffset(t *testing.T) {
	lines := strings.Split("a b c d e", " ")
	if got := Window(lines, 1, 2); got != "b\nc" {
		t.Fatalf("window = %q", got)
	}
	if got := Window(lines, 9, 2); got != "d\ne" {
		t.Fatalf("window past the end = %q", got)
	}
	if got := Window(lines, 0, 9); got != "a\nb\nc\nd\ne" {
		t.Fatalf("window taller than text = %q", got)
	}
}

func TestIndent(t *testing.T) {
	if got := Indent("a\nb", "  "); got != "  a\n  b" {
		t.Fatalf("Indent = %q", got)
	}
}

func TestHangAndClamp(t *testing.T) {
	if got := Hang("- ", "one two three four five six seven eight nine ten eleven", 20); got != "- one two three four\n  five six seven\n  eight nine ten\n  eleven" {
		t.Fatalf("Hang = %q", got)
	}
	got := Clamp("one two three four five six seven eight nine ten eleven twelve", 12, 2)
	if len(got) != 2 || !strings.HasSuffix(got[1], "…") {
		t.Fatalf("Clamp = %q", got)
	}
	if Truncate("abcdef", 4) != "abc…" {
		t.Fatalf("Truncate = %q", Truncate("abcdef", 4))
	}
}

func TestReflow(t *testing.T) {
	in := "One replica of a scheduler\nshould stay active.\n\n- keep\n- this list\n\n  indented\n  code"
	want := "One replica of a scheduler should stay active.\n\n- keep\n- this list\n\n  indented\n  code"
	if got := Reflow(in); got != want {
		t.Fatalf("reflow =\n%q\nwant\n%q", got, want)
	}
}

func TestInlineDropsCodeBackticks(t *testing.T) {
	got := Inline("Call `Campaign` on a `*concurrency.Election`; a lone ` stays.")
	want := "Call Campaign on a *concurrency.Election; a lone ` stays."
	if got != want {
		t.Fatalf("Inline = %q, want %q", got, want)
	}
}
