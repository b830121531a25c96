package progressview

import (
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/screentest"
)

// cursorLine is the line the cursor is on.
func cursorLine(v string) string {
	for _, l := range strings.Split(v, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "›") {
			return l
		}
	}
	return ""
}

// TestUpdateOpensWhatTheCursorIsOn: enter on a lesson opens it where the
// learner left off, on its checkpoints the first page with one not
// answered right, on an experiment the experiment.
func TestUpdateOpensWhatTheCursorIsOn(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{File: "/tmp/x/progress.json"}), ctx, 80, 24)
	v := d.View()
	if !strings.Contains(v, "01 First steps with a test course") || !strings.Contains(v, "Saved in /tmp/x/progress.json") {
		t.Fatalf("progress view lacks the lesson or the file:\n%s", v)
	}
	d.Press("enter")
	if open, ok := screentest.Last[screen.OpenLesson](d); !ok || open.Lesson != "first-steps" || open.Page != -1 {
		t.Fatalf("enter on the lesson sent %+v", d.Sent)
	}
	d.Press("j", "enter")
	if open, _ := screentest.Last[screen.OpenLesson](d); open.Page != 0 {
		t.Fatalf("enter on the checkpoints sent %+v, want the checkpoint's page 0", d.Sent)
	}
	for i := 0; i < 10 && !strings.Contains(cursorLine(d.View()), "experiment fencing"); i++ {
		d.Press("j")
	}
	d.Press("enter")
	if open, ok := screentest.Last[screen.OpenExperiment](d); !ok || open.Name != "fencing" {
		t.Fatalf("enter on the experiment row sent %+v:\n%s", d.Sent, d.View())
	}
}

// TestUpdateResetsOnlyAfterYes: r asks (holding esc), any key but y
// keeps the progress, y sends the reset; progress news rebuild the list.
func TestUpdateResetsOnlyAfterYes(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{}), ctx, 80, 24)
	d.Press("r")
	if !d.S.Capturing() || !strings.Contains(d.View(), "Forget lesson 01 First steps with a test course") {
		t.Fatalf("r does not ask (capturing %v):\n%s", d.S.Capturing(), d.View())
	}
	d.Press("n")
	if _, sent := screentest.Last[screen.ResetProgress](d); sent || d.S.Capturing() {
		t.Fatalf("n sent a reset or kept asking: %+v", d.Sent)
	}
	d.Press("r", "y")
	if r, ok := screentest.Last[screen.ResetProgress](d); !ok || r.Lesson != "first-steps" {
		t.Fatalf("r, y sent %+v", d.Sent)
	}

	p := progress.New()
	p.MarkPageRead("first-steps", 0, time.Now())
	d.Send(screen.ProgressChanged{Progress: p})
	if got := d.S.Status(); !strings.HasPrefix(got, "pages 1/") {
		t.Fatalf("status %q after a page was read", got)
	}
}
