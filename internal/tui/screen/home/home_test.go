package home

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/screen/screentest"
	"github.com/ownership-election/playground/lessons"
)

// TestUpdateMovesAndOpens: the cursor moves with the shared navigation
// keys and enter, t and c ask the root for the selected lesson, its quiz,
// or the place the learner left off.
func TestUpdateMovesAndOpens(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{}), ctx, 80, 24)
	v := d.View()
	if !strings.Contains(v, "01 First steps with a test course") || !strings.Contains(v, "02 Second thoughts") {
		t.Fatalf("course map lacks the lessons:\n%s", v)
	}
	if !strings.Contains(v, "› ") || !strings.Contains(v, "New here?") {
		t.Fatalf("no cursor or first-time line:\n%s", v)
	}

	d.Press("j", "enter")
	if open, ok := screentest.Last[screen.OpenLesson](d); !ok || open.Lesson != "second-thoughts" || open.Page != -1 {
		t.Fatalf("j, enter sent %+v, want lesson 2 where the learner left off", d.Sent)
	}
	d.Press("G", "t")
	if open, ok := screentest.Last[screen.OpenQuiz](d); !ok || open.Lesson != "second-thoughts" {
		t.Fatalf("t sent %+v", d.Sent)
	}
	d.Press("g", "t")
	if open, ok := screentest.Last[screen.OpenQuiz](d); !ok || open.Lesson != "first-steps" {
		t.Fatalf("g, t sent %+v: g must go to the top", d.Sent)
	}

	// Progress news refresh the map: pages read, and where to continue.
	p := progress.New()
	p.MarkPageRead("first-steps", 1, time.Now())
	d.Send(screen.ProgressChanged{Progress: p})
	if v := d.View(); !strings.Contains(v, "Continue: 01 First steps with a test course, page 3/3 (next unread)") {
		t.Fatalf("no continue line after a page was read:\n%s", v)
	}
	d.Press("c")
	if open, ok := screentest.Last[screen.OpenLesson](d); !ok || open.Lesson != "first-steps" || open.Page != 2 {
		t.Fatalf("c sent %+v, want first-steps page 2, the next unread", d.Sent)
	}
	// With page 2 read too, c goes back to the page skipped, page 0.
	p.MarkPageRead("first-steps", 2, time.Now())
	d.Send(screen.ProgressChanged{Progress: p})
	d.Press("c")
	if open, ok := screentest.Last[screen.OpenLesson](d); !ok || open.Lesson != "first-steps" || open.Page != 0 {
		t.Fatalf("c sent %+v, want first-steps page 0, skipped", d.Sent)
	}
}

// TestUpdateExperimentChooserNamesTitlesFromTheCourse: a lesson with
// several experiments lists them with the titles the course gives, holds
// esc while open, and opens the one whose number is pressed.
func TestUpdateExperimentChooserNamesTitlesFromTheCourse(t *testing.T) {
	c := screentest.Course(t)
	c.Lesson("first-steps").Experiments = []string{"fencing", "renewal"}
	c.ExperimentTitles["renewal"] = "Renewing a lease"
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{}), ctx, 80, 24)
	d.Press("x")
	v := d.View()
	if !strings.Contains(v, "Which experiment?") || !strings.Contains(v, "1  fencing · A zombie owner's late write") ||
		!strings.Contains(v, "2  renewal · Renewing a lease") {
		t.Fatalf("chooser without the course's titles:\n%s", v)
	}
	if !d.S.Capturing() {
		t.Fatal("an open chooser must keep esc")
	}
	d.Press("2")
	if open, ok := screentest.Last[screen.OpenExperiment](d); !ok || open.Name != "renewal" {
		t.Fatalf("2 sent %+v", d.Sent)
	}
	if d.S.Capturing() {
		t.Fatal("the chooser stayed open")
	}
}

// TestUpdateEtcdAndNotice: the etcd state and a notice given at start
// show on the map.
func TestUpdateEtcdAndNotice(t *testing.T) {
	c := screentest.Course(t)
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{Notice: "saved progress could not be read"}), ctx, 80, 24)
	d.Send(screen.EtcdStatus{Detail: "etcd failed: port taken; see etcd.log", Failed: true})
	v := d.View()
	if !strings.Contains(v, "saved progress could not be read") || !strings.Contains(v, "etcd failed: port taken") {
		t.Fatalf("notice or etcd failure missing:\n%s", v)
	}
}

// TestCourseMapFitsAt80x24: with the whole course at 80x24 (the area the
// root gives the map under its title and above its status and help
// lines), every lesson's detail is shown whole, and so is the list of a
// lesson's labs or experiments to choose from: the blank lines and, if
// need be, rows far from the cursor give way, never the detail. With
// 13 lessons the detail had three lines, and lesson 7's third lab and
// lesson 13's third experiment were cut.
func TestCourseMapFitsAt80x24(t *testing.T) {
	c, problems := lessons.Load(content.Sources())
	if c == nil {
		t.Fatalf("load the course: %v", problems)
	}
	ctx := screentest.Context(c)
	d := screentest.New(t, New(ctx, Options{}), ctx, 80, 21)
	fits := func(what string, wants ...string) {
		t.Helper()
		v := d.View()
		if n := strings.Count(v, "\n") + 1; n > 21 {
			t.Fatalf("%s: %d lines for 21:\n%s", what, n, v)
		}
		for _, w := range wants {
			if !strings.Contains(v, w) {
				t.Fatalf("%s: %q is cut or missing:\n%s", what, w, v)
			}
		}
	}
	for i, l := range c.Lessons {
		what := fmt.Sprintf("lesson %d", l.Number)
		fits(what, fmt.Sprintf("%02d %s", l.Number, l.Title[:min(len(l.Title), 15)]), fmt.Sprintf("%d pages", len(l.Pages)))
		if len(l.Labs) > 1 {
			d.Press("l")
			wants := []string{"Which lab", "press its number"}
			for _, id := range l.Labs {
				wants = append(wants, id)
			}
			fits(what+"'s labs", wants...)
			d.Press("esc")
		}
		if len(l.Experiments) > 1 {
			d.Press("x")
			wants := []string{"Which experiment?", "press its number"}
			for _, name := range l.Experiments {
				wants = append(wants, name)
			}
			fits(what+"'s experiments", wants...)
			d.Press("esc")
		}
		if i < len(c.Lessons)-1 {
			d.Press("j")
		}
	}
}
