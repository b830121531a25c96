package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestFitPadsAndCuts(t *testing.T) {
	got := fit("abcdef\nxy\n1\n2\n3", 4, 3)
	if got != "abcd\nxy\n1" {
		t.Fatalf("fit = %q", got)
	}
	if got := fit("a", 3, 3); got != "a\n\n" {
		t.Fatalf("fit short = %q", got)
	}
	// Styled text is cut by cells, not bytes.
	s := "\x1b[1mhello world\x1b[m"
	if w := ansi.StringWidth(fit(s, 5, 1)); w != 5 {
		t.Fatalf("styled fit width %d, want 5", w)
	}
}

func TestColumnsAlign(t *testing.T) {
	got := columns(3, "|", block{"ab\nabcdef", 4}, block{"x\ny\nz", 2})
	want := "ab  |x\nabcd|y\n    |z"
	if got != want {
		t.Fatalf("columns =\n%s\nwant\n%s", got, want)
	}
}

func TestWindowClampsOffset(t *testing.T) {
	lines := strings.Split("a b c d e", " ")
	if got := window(lines, 1, 2); got != "b\nc" {
		t.Fatalf("window = %q", got)
	}
	if got := window(lines, 9, 2); got != "d\ne" {
		t.Fatalf("window past the end = %q", got)
	}
	if got := window(lines, 0, 9); got != "a\nb\nc\nd\ne" {
		t.Fatalf("window taller than text = %q", got)
	}
}

func TestPadLeft(t *testing.T) {
	if got := padLeft("a\nb", 2); got != "  a\n  b" {
		t.Fatalf("padLeft = %q", got)
	}
}

func TestSmallTerminalsDoNotOverflow(t *testing.T) {
	for _, size := range [][2]int{{50, 12}, {40, 8}} {
		for _, path := range [][]string{nil, {"enter"}, {"enter", "c"}, {"t"}, {"t", "1", "enter"}, {"?"}, {"x"}} {
			h := newHarness(t, size[0], size[1])
			h.keys(path...)
			h.checkFits()
		}
	}
}

func TestReflow(t *testing.T) {
	in := "One replica of a scheduler\nshould stay active.\n\n- keep\n- this list\n\n  indented\n  code"
	want := "One replica of a scheduler should stay active.\n\n- keep\n- this list\n\n  indented\n  code"
	if got := reflow(in); got != want {
		t.Fatalf("reflow =\n%q\nwant\n%q", got, want)
	}
}
