package tui

import (
	"testing"

	"github.com/ownership-election/playground/internal/class"
)

// TestClassProblemInTheStatusLine: a refused login takes the status line,
// whole at 80 columns, until the publisher says it is gone.
func TestClassProblemInTheStatusLine(t *testing.T) {
	// Messages arrive as the publisher's channel would deliver them (the
	// harness runs commands synchronously, so no channel is given).
	h := newHarness(t, 80, 24)
	h.send(classStatusMsg{problem: class.LoginRefused})
	h.mustShow(class.LoginRefused)
	h.checkFits()
	h.send(classStatusMsg{problem: class.ClusterFull})
	h.mustShow(class.ClusterFull)
	h.send(classStatusMsg{problem: ""})
	h.mustNotShow("class:")
	if got := shortProblem(class.LoginRefused); got != "class: login refused" {
		t.Errorf("short form %q", got)
	}
}
