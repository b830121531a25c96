package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/lessons"
)

// TestHeaderNamesTheLesson: the header says which lesson the lab belongs
// to by number and title, not by the manifest's id, and at 80 columns a
// long lesson title gives way to the file the learner edits.
func TestHeaderNamesTheLesson(t *testing.T) {
	m := newTest(t, fixtureRoot, 100, 30)
	sub := strings.Split(view(m), "\n")[1]
	if !strings.Contains(sub, "lesson 1 · Do you need an election? · you edit labs/00_demo/demo.go") {
		t.Fatalf("subtitle = %q", sub)
	}
	if strings.Contains(sub, "do-you-need-an-election") {
		t.Fatalf("subtitle shows the lesson id: %q", sub)
	}

	long := &lessons.Lesson{Number: 5, ID: "fencing-tokens", Title: "Fencing tokens and concurrent data manipulation, at great length"}
	m = New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot, Lesson: long, Now: func() time.Time { return fixedNow }})
	m.SetSize(80, 24)
	m = runCmd(t, m, m.Init())
	sub = strings.Split(view(m), "\n")[1]
	if ansi.StringWidth(sub) > 80 || !strings.HasPrefix(sub, "lesson 5 · Fencing tokens") ||
		!strings.Contains(sub, "…") || !strings.HasSuffix(strings.TrimRight(sub, " "), "you edit labs/00_demo/demo.go") {
		t.Fatalf("80-column subtitle = %q", sub)
	}

	// Without the course (a lab opened by id alone) the manifest's id is shown.
	m = New(testContext(), Options{Lab: demoLab(), Root: fixtureRoot})
	m.SetSize(100, 30)
	m = runCmd(t, m, m.Init())
	if sub = strings.Split(view(m), "\n")[1]; !strings.HasPrefix(sub, "lesson do-you-need-an-election · ") {
		t.Fatalf("subtitle without a course = %q", sub)
	}
}
