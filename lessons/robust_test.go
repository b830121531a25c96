package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyGood copies testdata/good to a temporary folder the test may spoil.
func copyGood(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/good")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadDir(dir string) []Problem {
	_, probs := Load(Sources{Course: os.DirFS(dir), CourseRoot: "c",
		Labs: os.DirFS("testdata/labs"), LabsRoot: "labs", OwnLabs: true, Experiments: testExperiments})
	return probs
}

func TestInvalidUTF8IsReportedWithLine(t *testing.T) {
	dir := copyGood(t)
	md := filepath.Join(dir, "lessons", "02-second-go", "lesson.md")
	data, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	const bad = 11             // "Text with an @-sign ..."
	lines[bad-1] += " caf\xe9" // Latin-1, not UTF-8
	if err := os.WriteFile(md, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	probs := loadDir(dir)
	want := Problem{Path: "c/lessons/02-second-go/lesson.md", Line: bad, Msg: "invalid UTF-8: the file must be saved as UTF-8 text"}
	if len(probs) != 1 || probs[0] != want {
		t.Errorf("problems = %v, want only %v", probs, want)
	}
}
