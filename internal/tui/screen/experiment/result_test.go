package experiment

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
)

// TestVerdictWholeAt80x24: at 80x24 the finished run's result is whole,
// a long verdict of two parts included (the timeline gives up its lines
// first, keeping its lanes), and a pick the run could not judge says so
// and why, in place of a mark it did not earn; no review is scheduled
// from it, so the next run of the screen judges it.
func TestVerdictWholeAt80x24(t *testing.T) {
	m := newModel(t, "ttl-unlock-bug", true, 78, 22)
	m.picked = 0
	m = done(m)
	sentence := "Not shown: With a plain delete, etcd had already deleted P2's key (revision 5) before P1 unlocked, after you paused P2 at 31.0s, so P1's unlock deleted nothing: etcd held no lock-naive at revision 5; P3 then took the free lock at revision 6, when P2 no longer believed it held it: at 33.1s it noticed its lock was gone. What it did show: With the versioned unlock, P1's unlock was refused: lock-versioned's ModRevision is 10, not 8 (it holds P2's lock), and there was never more than one owner."
	m.snap.verdict = &history.Verdict{Scenario: "ttl-unlock-bug", Summary: sentence}
	reason := "in the naive part P2's key was gone before P1 unlocked, after you paused P2 at 31.0s"
	m.predicted = &history.Prediction{Picked: "Naive: the lock is free and P3 takes it; versioned: it is held, by P2", Unjudged: reason}
	m.judge = true
	v := view(m)
	lines := strings.Split(v, "\n")
	if len(lines) > 22 {
		t.Errorf("%d lines", len(lines))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 78 {
			t.Errorf("a line of %d cells: %q", ansi.StringWidth(l), l)
		}
	}
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{sentence, "You predicted: Naive: the lock is free", "– not judged", "This run cannot judge it: " + reason + ". Run it again to have it judged."} {
		if !strings.Contains(flat, want) {
			t.Errorf("the result does not say, whole: %q\n%s", want, v)
		}
	}
	if !strings.Contains(v, " etcd ") || !strings.Contains(v, "timeline") {
		t.Errorf("the timeline lost its lanes:\n%s", v)
	}
	if strings.Contains(v, "✓ right") || m.judged() != nil || !m.judge {
		t.Errorf("a pick the run could not judge is marked, or sent to review")
	}
}
