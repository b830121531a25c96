package tui

import (
	"bytes"
	"fmt"
	"testing"

	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/lessons"
)

// asciiView is the view as a terminal with the ASCII colour profile shows
// it: no colours, but bold, italics and reverse video kept.
func asciiView(t *testing.T, h *harness) string {
	t.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.Ascii}
	if _, err := w.WriteString(h.m.View().Content); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestGolden draws every screen at 80x24 and 120x40 and compares with
// testdata/TestGolden/*.golden; run with -update to refresh them.
func TestGolden(t *testing.T) {
	screens := []struct {
		name string
		keys []string
	}{
		{"home", nil},
		{"home_help", []string{"?"}},
		{"reader_page1", []string{"enter"}},
		{"reader_page2", []string{"enter", "n"}},
		{"reader_help", []string{"enter", "?"}},
		{"checkpoint", []string{"enter", "c"}},
		{"checkpoint_feedback", []string{"enter", "c", "2", "enter"}},
		{"quiz_single", []string{"t"}},
		{"quiz_feedback", []string{"t", "1", "enter"}},
		{"quiz_numeric", []string{"t", "1", "enter", "enter", "1", "enter", "enter", "1", "2"}},
		{"quiz_order", []string{"t", "1", "enter", "enter", "1", "enter", "enter", "6", "enter", "enter"}},
		{"quiz_score", []string{"t", "1", "enter", "enter", "1", "enter", "enter", "6", "enter", "enter", "enter", "enter"}},
		{"lab_placeholder", []string{"l"}},
		{"experiment_placeholder", []string{"x"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				h := newHarness(t, size[0], size[1], func(o *Options) { o.Etcd = startOK })
				h.send(etcdStartMsg{})
				h.keys(sc.keys...)
				h.checkFits()
				golden.RequireEqual(t, asciiView(t, h))
			})
		}
	}
}

// TestGoldenEmbedded draws the course map of the real embedded course. A
// change to a lesson's title, summary or objectives changes it: refresh with
// go test ./internal/tui -run TestGoldenEmbedded -update.
func TestGoldenEmbedded(t *testing.T) {
	course, probs := lessons.Load(lessons.Sources{Course: content.FS(), CourseRoot: "content"})
	if len(course.Lessons) == 0 {
		t.Fatalf("embedded course has no lessons: %v", probs)
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("home_%dx%d", size[0], size[1]), func(t *testing.T) {
			h := newHarness(t, size[0], size[1], func(o *Options) { o.Course = course; o.Etcd = startOK })
			h.send(etcdStartMsg{})
			h.checkFits()
			golden.RequireEqual(t, asciiView(t, h))
		})
	}
}

// TestCourseMapColumnsAlign checks that every row of the real course map
// puts its page count's slash, quiz and labs in the same columns, whether a
// lesson has fewer or more than ten pages (lesson 6 once read "0/10" one
// column left of the others).
func TestCourseMapColumnsAlign(t *testing.T) {
	course, probs := lessons.Load(lessons.Sources{Course: content.FS(), CourseRoot: "content"})
	if len(course.Lessons) == 0 {
		t.Fatalf("embedded course has no lessons: %v", probs)
	}
	h := newHarness(t, 80, 24, func(o *Options) { o.Course = course })
	slash := -1
	rows := 0
	for _, line := range strings.Split(h.screen(), "\n") {
		i := strings.LastIndex(line, " pages ")
		if i >= 0 || !strings.Contains(line, "/") || len(line) < 20 {
			continue
		}
		tail := line[len(line)-17:]
		j := strings.Index(tail, "/")
		if j < 0 {
			continue
		}
		rows++
		if slash < 0 {
			slash = j
		} else if j != slash {
			t.Errorf("row %q has its page slash at column %d of the stats, others at %d", strings.TrimSpace(line), j, slash)
		}
	}
	if rows != len(course.Lessons) {
		t.Fatalf("found %d lesson rows with page counts, the course has %d lessons:\n%s", rows, len(course.Lessons), h.screen())
	}
}
