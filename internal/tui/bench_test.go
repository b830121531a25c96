package tui

import (
	"testing"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/lessons"
)

// BenchmarkReaderScroll is one scroll key on the lesson screen at 200x60:
// Update and View, as the runtime does per key press.
func BenchmarkReaderScroll(b *testing.B) {
	course, _ := lessons.Load(lessons.Sources{Course: content.FS(), CourseRoot: "content"})
	h := newHarness(b, 200, 60, func(o *Options) { o.Course = course; o.ProgressPath = "" })
	h.send(screen.OpenLesson{Lesson: course.Lessons[4].ID, Page: 0})
	down, up := keyMsg("j"), keyMsg("k")
	b.ResetTimer()
	for i := range b.N {
		k := down
		if (i/20)%2 == 1 {
			k = up
		}
		next, _ := h.m.Update(k)
		h.m = next.(Model)
		_ = h.m.View()
	}
}
