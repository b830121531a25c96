package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseLesson feeds arbitrary text to the front matter and page
// parser: it must not panic, every problem must name the file and a line
// inside it, and no page may keep a directive line in its Markdown.
func FuzzParseLesson(f *testing.F) {
	files, _ := filepath.Glob("testdata/good/lessons/*/lesson.md")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, probs := ParseLesson("f.md", data)
		if l == nil {
			t.Fatal("nil lesson")
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, p := range probs {
			if p.Path != "f.md" || p.Line < 0 || p.Line > lines || p.Msg == "" {
				t.Fatalf("bad problem %+v (file has %d lines)", p, lines)
			}
		}
		for _, pg := range l.Pages {
			if pg.Line < 1 || pg.Line > lines {
				t.Fatalf("page %q on line %d of %d", pg.Title, pg.Line, lines)
			}
			if len(pg.checkLines) != len(pg.Checks) || len(pg.tryLines) != len(pg.Tries) {
				t.Fatalf("page %q: directive lines out of step", pg.Title)
			}
		}
	})
}
