package main

import (
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// TestFindingNames: a lab run's violation goes by the name its verdict's
// first violation at an instant gives it; a verdict with none has none.
func TestFindingNames(t *testing.T) {
	at := func(name string, s float64) history.Finding {
		return history.Finding{Violation: name, At: time.Duration(s * float64(time.Second)), Timed: true, Text: name + " at ..."}
	}
	held := history.Finding{Held: true, Text: "every replica's code ran until it was told to stop"}
	for _, c := range []struct {
		findings []history.Finding
		want     string
	}{
		{[]history.Finding{held, at("two-owners", 9.82)}, "two-owners"},
		{[]history.Finding{at("unowned", 4.15), at("left-behind", 1.8)}, "unowned"},
		{[]history.Finding{{Violation: "no-leader", Text: "no-leader: ..."}, at("left-behind", 1.8)}, "left-behind"},
		{[]history.Finding{held}, ""},
	} {
		v := history.Verdict{Findings: c.findings}
		if got := finding(v); got != c.want {
			t.Errorf("finding(%q) = %q, want %q", v.Sentence(), got, c.want)
		}
	}
}
