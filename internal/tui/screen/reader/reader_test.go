package reader

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/screentest"
)

// TestUpdateTurnsPagesAndRecordsThem: the reader opens at the page asked
// for, renders it, and each page turn is shown and sent to the root to
// record; it stops at the last page.
func TestUpdateTurnsPagesAndRecordsThem(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{Lesson: c.Lesson("first-steps"), Page: 0}), ctx, 80, 24)
	if shown, ok := screentest.Last[screen.PageShown](d); !ok || shown.Page != 0 || shown.Lesson != "first-steps" {
		t.Fatalf("opening sent %+v, want page 0 shown", d.Sent)
	}
	if v := d.View(); !strings.Contains(v, "Opening page") || !strings.Contains(v, "first page of the test course") {
		t.Fatalf("first page not shown:\n%s", v)
	}
	d.Press("n")
	if shown, _ := screentest.Last[screen.PageShown](d); shown.Page != 1 {
		t.Fatalf("n sent %+v, want page 1 shown", d.Sent)
	}
	if v := d.View(); !strings.Contains(v, "Middle page") || !strings.Contains(v, "A ──▶ B ──▶ C") {
		t.Fatalf("second page not shown:\n%s", v)
	}
	if got := d.S.Status(); !strings.HasPrefix(got, "page 2/3") {
		t.Fatalf("status %q, want page 2/3", got)
	}
	d.Press("n", "n", "n")
	if got := d.S.Status(); !strings.HasPrefix(got, "page 3/3") {
		t.Fatalf("status %q: paged past the end", got)
	}
	d.Press("p")
	if got := d.S.Status(); !strings.HasPrefix(got, "page 2/3") {
		t.Fatalf("p: status %q", got)
	}
}

// TestUpdateAsksTheCheckpointInPlace: c opens the page's checkpoint,
// which keeps esc; an answer is sent to the root and esc goes back to the
// page.
func TestUpdateAsksTheCheckpointInPlace(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{Lesson: c.Lesson("first-steps"), Page: 0}), ctx, 80, 24)
	d.Press("c")
	v := d.View()
	if !strings.Contains(v, "Which number is three?") || !d.S.Capturing() {
		t.Fatalf("checkpoint not open (capturing %v):\n%s", d.S.Capturing(), v)
	}
	n := regexp.MustCompile(`(\d) \( \) The number 3`).FindStringSubmatch(v)
	if n == nil {
		t.Fatalf("no right option on screen:\n%s", v)
	}
	d.Press(n[1], "enter")
	ans, ok := screentest.Last[screen.CheckAnswered](d)
	if !ok || ans.Question != "ts-check-three" || ans.Answer.Score != 1 {
		t.Fatalf("answer sent %+v (ok %v), want ts-check-three right", ans, ok)
	}
	d.Press("esc")
	if d.S.Capturing() || !strings.Contains(d.View(), "Opening page") {
		t.Fatalf("esc did not go back to the page:\n%s", d.View())
	}
}

// TestUpdateJumpsToPractice: t, l and x ask the root for the lesson's
// quiz, lab and experiment.
func TestUpdateJumpsToPractice(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{Lesson: c.Lesson("first-steps"), Page: 0}), ctx, 80, 24)
	d.Press("t", "l", "x")
	q, okq := screentest.Last[screen.OpenQuiz](d)
	l, okl := screentest.Last[screen.OpenLab](d)
	x, okx := screentest.Last[screen.OpenExperiment](d)
	if !okq || q.Lesson != "first-steps" || !okl || l.Lab != "01_cas" || !okx || x.Name != "fencing" {
		t.Fatalf("t, l, x sent %+v", d.Sent)
	}
}

// TestPageBarFillsReadPages: the dots above the page mark the current
// page (◉), the pages read (●: saved ones, and each shown since) and the
// others (○), as its comment always said; every dot was ○ but the
// current one, so a learner could not see what they had read.
func TestPageBarFillsReadPages(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	ctx.Progress.MarkPageRead("first-steps", 2, time.Now())
	d := screentest.New(t, New(ctx, Options{Lesson: c.Lesson("first-steps"), Page: 1}), ctx, 80, 24)
	if v := d.View(); !strings.Contains(v, "○◉● page 2 of 3") {
		t.Fatalf("page 2 open, page 3 read before: the bar should read ○◉●:\n%s", v)
	}
	d.Press("p")
	if v := d.View(); !strings.Contains(v, "◉●● page 1 of 3") {
		t.Fatalf("back on page 1, page 2 now read: the bar should read ◉●●:\n%s", v)
	}
}
