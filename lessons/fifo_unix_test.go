//go:build unix

package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe where lesson.md should be would block the reader forever;
// it is refused as not a regular file.
func TestNamedPipeLessonIsRefused(t *testing.T) {
	dir := copyGood(t)
	md := filepath.Join(dir, "lessons", "01-first-steps", "lesson.md")
	if err := os.Remove(md); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(md, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan []Problem)
	go func() { done <- loadDir(dir) }()
	select {
	case probs := <-done:
		found := false
		for _, p := range probs {
			if p.Path == "c/lessons/01-first-steps/lesson.md" && strings.Contains(p.Msg, "not a regular file (a named pipe)") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem for the named pipe: %v", probs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("loading a course with a named pipe for a lesson hangs")
	}
}
