package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestReaderPagesForwardAndBack(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter")
	h.mustShow("Opening page", "page 1/3")
	h.keys("right")
	h.mustShow("Middle page", "page 2/3", "A ──▶ B ──▶ C")
	h.keys("n")
	h.mustShow("Closing page", "page 3/3", "End of the lesson")
	h.keys("n") // already on the last page
	h.mustShow("page 3/3")
	h.keys("p", "left")
	h.mustShow("Opening page", "page 1/3")
	h.keys("left")
	h.mustShow("page 1/3")
	h.checkFits()
}

func TestReaderRecordsPagesRead(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "n", "n")
	p := h.savedProgress()
	l := p.Lessons["first-steps"]
	if l == nil || len(l.PagesRead) != 3 || l.LastPage != 2 {
		t.Fatalf("saved progress = %+v, want 3 pages read, last page 2", l)
	}
	if p.Last.Lesson != "first-steps" || p.Last.Page != 2 {
		t.Fatalf("last position = %+v", p.Last)
	}
}

func TestReaderReopensAtLastPage(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "n", "esc", "enter")
	h.mustShow("Middle page", "page 2/3")
}

func TestReaderRendersWithGlamourAndCaches(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter")
	k := h.m.reader.key(0)
	if _, ok := h.m.reader.cache[k]; !ok {
		t.Fatalf("page 1 not rendered and cached at width %d", k.width)
	}
	// The neighbour was rendered ahead, so paging needs no new rendering.
	if _, ok := h.m.reader.cache[h.m.reader.key(1)]; !ok {
		t.Fatal("next page not rendered ahead")
	}
	next, cmd := h.m.Update(keyMsg("n"))
	h.m = next.(Model)
	if cmd == nil {
		t.Fatal("paging sent no command at all (progress should be recorded)")
	}
	for _, msg := range flatten(cmd) {
		if _, isRender := msg.(renderedMsg); isRender {
			if rm := msg.(renderedMsg); rm.key == h.m.reader.key(1) {
				t.Fatal("page 2 rendered again although cached")
			}
		}
	}
	// Glamour's list bullets show the Markdown was rendered, not shown raw.
	h.keys("p")
	h.mustShow("• one point")
	h.mustNotShow("- one point")
}

// flatten runs a command and returns the messages, opening batches.
func flatten(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, flatten(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

func TestReaderShowsPlainTextBeforeRendering(t *testing.T) {
	h := newHarness(t, 80, 24)
	// Update without running the render command: the page must be readable.
	next, _ := h.m.Update(openLessonMsg{lesson: "first-steps", page: 0})
	h.m = next.(Model)
	h.mustShow("Opening page", "This is the first page of the test course")
}

func TestReaderRerendersOnResize(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter")
	h.send(tea.WindowSizeMsg{Width: 60, Height: 24})
	if _, ok := h.m.reader.cache[h.m.reader.key(0)]; !ok || h.m.reader.key(0).width != 58 {
		t.Fatalf("no rendering at the new width (key %+v)", h.m.reader.key(0))
	}
	h.checkFits()
}

func TestReaderScrollsAndShowsPercent(t *testing.T) {
	h := newHarness(t, 80, 12)
	h.keys("enter")
	h.mustShow("page 1/3 · 0%")
	h.keys("G")
	h.mustShow("page 1/3 · 100%")
	h.keys("g", "j")
	if strings.Contains(h.screen(), "· 0%") || strings.Contains(h.screen(), "· 100%") {
		t.Fatalf("one line down should be between top and bottom:\n%s", h.screen())
	}
	h.checkFits()
}

func TestReaderCheckpointInline(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter")
	h.mustShow("Checkpoint", "press c to answer", "Which number is three?")
	h.keys("c")
	h.mustShow("Checkpoint · Opening page", "The number 2", "The number 3", "page 1/3 · checkpoint")
	q := h.m.course.Lesson("first-steps").Quiz.Question("ts-check-three")
	h.keys(displayPos(q, 0), "enter")
	h.mustShow("✓ Correct.", "Three is written 3.", "Two comes before three.", "Five is much larger.", "Takeaway: Three is 3.")
	h.keys("enter")
	h.mustShow("Opening page", "answered; c to try again")
	a := h.savedProgress().Lessons["first-steps"].Checks["ts-check-three"]
	if !a.Correct || a.Response != "1" {
		t.Fatalf("saved check answer = %+v, want correct with response 1", a)
	}
}

func TestReaderCheckpointEscReturnsToPage(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "c", "esc")
	if h.m.state != stateReader || h.m.reader.checkOpen() {
		t.Fatal("esc in a checkpoint should close it and stay in the reader")
	}
	h.keys("esc")
	if h.m.state != stateHome {
		t.Fatal("second esc should go home")
	}
}

func TestReaderJumpsToQuizLabAndExperiment(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "t")
	if h.m.state != stateQuiz {
		t.Fatalf("t in the reader: state %v, want quiz", h.m.state)
	}
	h.keys("esc")
	if h.m.state != stateReader {
		t.Fatalf("esc from a quiz opened in the reader: state %v, want reader", h.m.state)
	}
	h.keys("x")
	h.mustShow("Experiment fencing", "playground experiment run fencing")
	h.keys("esc", "n", "n", "l")
	h.mustShow("Lab 01_cas", "git clone", "go test ./labs/01_cas/")
	h.checkFits()
}
