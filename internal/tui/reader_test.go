package tui

import (
	"reflect"
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
	h.keys("n") // past the last page: the next lesson
	h.mustShow("02 Second thoughts", "Only page", "page 1/1")
	h.keys("esc", "1", "enter") // lesson 1 opens where it was left, its last page
	h.mustShow("Closing page", "page 3/3")
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
	if _, ok := h.readerScreen().Rendered(0); !ok {
		t.Fatal("page 1 not rendered and cached")
	}
	// The neighbour was rendered ahead, so paging needs no new rendering.
	if _, ok := h.readerScreen().Rendered(1); !ok {
		t.Fatal("next page not rendered ahead")
	}
	next, cmd := h.m.Update(keyMsg("n"))
	h.m = next.(Model)
	if cmd == nil {
		t.Fatal("paging sent no command at all (progress should be recorded)")
	}
	// Only page 3, the new neighbour, is rendered; page 2 is cached.
	if n := renderings(cmd); n != 1 {
		t.Fatalf("paging to page 2 started %d renderings, want 1 (page 3 only)", n)
	}
	h.mustShow("Middle page", "The second page has a code block.")
}

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

// renderings counts the page renderings (the reader's renderedMsg) that
// cmd delivers.
func renderings(cmd tea.Cmd) int {
	n := 0
	for _, msg := range flatten(cmd) {
		if msg != nil && strings.HasSuffix(reflect.TypeOf(msg).String(), "renderedMsg") {
			n++
		}
	}
	return n
}

func TestReaderRerendersOnResize(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter")
	h.send(tea.WindowSizeMsg{Width: 60, Height: 24})
	if _, ok := h.readerScreen().Rendered(0); !ok || h.readerScreen().TextWidth() != 58 {
		t.Fatalf("no rendering at the new width %d", h.readerScreen().TextWidth())
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
	h.mustShow("Opening page", "✓ Checkpoint · answered right; c to try again")
	a := h.savedProgress().Lessons["first-steps"].Checks["ts-check-three"]
	if !a.Correct || a.Response != "1" || !a.At.Equal(testNow) {
		t.Fatalf("saved check answer = %+v, want correct with response 1 at %v", a, testNow)
	}
}

// TestReaderCheckpointWrongAnswerIsNotUnanswered: a wrong answer is marked
// as such on the page, now and after a restart, not as a fresh question.
func TestReaderCheckpointWrongAnswerIsNotUnanswered(t *testing.T) {
	h := newHarness(t, 80, 24)
	q := h.m.course.Lesson("first-steps").Quiz.Question("ts-check-three")
	h.keys("enter", "c", displayPos(q, 1), "enter", "enter")
	h.mustShow("✗ Checkpoint · answered wrong; c to try again")
	h.mustNotShow("press c to answer")
	saved := h.savedProgress()
	if a := saved.Lessons["first-steps"].Checks["ts-check-three"]; a.Correct || !a.At.Equal(testNow) {
		t.Fatalf("saved check answer = %+v, want wrong at %v", a, testNow)
	}
	again := newHarness(t, 80, 24, func(o *Options) { o.Progress = saved })
	again.keys("enter")
	again.mustShow("✗ Checkpoint · answered wrong")
}

func TestReaderCheckpointEscReturnsToPage(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "c", "esc")
	if h.state() != "reader" || h.m.top().Capturing() {
		t.Fatal("esc in a checkpoint should close it and stay in the reader")
	}
	h.keys("esc")
	if h.state() != "home" {
		t.Fatal("second esc should go home")
	}
}

func TestReaderJumpsToQuizLabAndExperiment(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("enter", "t")
	if h.state() != "quiz" {
		t.Fatalf("t in the reader: state %s, want quiz", h.state())
	}
	h.keys("esc")
	if h.state() != "reader" {
		t.Fatalf("esc from a quiz opened in the reader: state %s, want reader", h.state())
	}
	h.keys("x")
	h.mustShow("Experiment: fencing", "Predict first")
	h.keys("esc", "n", "n", "l")
	h.mustShow("Lab 1.1 · ", "labs not found on this machine", "git clone")
	h.checkFits()
}
