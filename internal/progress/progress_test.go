package progress

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func TestMissingFileGivesEmptyProgress(t *testing.T) {
	p, n := Load(filepath.Join(t.TempDir(), FileName), t0)
	if n != nil {
		t.Fatalf("notice for a missing file: %v", n)
	}
	if len(p.Lessons) != 0 || p.Last.Lesson != "" {
		t.Fatalf("want empty progress, got %+v", p)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", FileName)
	p := New()
	p.MarkPageRead("fencing-tokens", 2, t0)
	p.MarkPageRead("fencing-tokens", 0, t0)
	p.MarkPageRead("fencing-tokens", 2, t0) // again: no duplicate
	p.RecordCheck("fencing-tokens", "zombie-write", Answer{Response: "2", Score: 1, Correct: true, At: t0})
	p.RecordQuiz("fencing-tokens", QuizResult{QuizID: "fencing-tokens", Total: 4, Score: 2.5, Finished: t0,
		Answers: map[string]Answer{"a": {Response: "1", Score: 1, Correct: true}, "b": {Response: "1,3", Score: 0.5}, "c": {Response: "3 1 2", Score: 1, Correct: true}, "d": {Response: "7"}}})
	p.RecordLabPassed("fencing-tokens", "04_fencing", t0)
	p.RecordLabPassed("fencing-tokens", "04_fencing", t0.Add(time.Hour)) // first pass kept

	if err := Save(path, p); err != nil {
		t.Fatal(err)
	}
	got, n := Load(path, t0)
	if n != nil {
		t.Fatalf("unexpected notice: %v", n)
	}
	l := got.Lessons["fencing-tokens"]
	if l == nil {
		t.Fatal("lesson record lost")
	}
	if !reflect.DeepEqual(l.PagesRead, []int{0, 2}) {
		t.Errorf("pages read = %v, want [0 2]", l.PagesRead)
	}
	if got.Last != (Position{Lesson: "fencing-tokens", Page: 2}) || l.LastPage != 2 {
		t.Errorf("last position = %+v / %d", got.Last, l.LastPage)
	}
	if a := l.Checks["zombie-write"]; !a.Correct || a.Response != "2" {
		t.Errorf("check answer = %+v", a)
	}
	if l.Quiz == nil || l.Quiz.Share() != 2.5/4 || l.BestQuiz != 2.5/4 {
		t.Errorf("quiz = %+v best %v", l.Quiz, l.BestQuiz)
	}
	if m := l.Quiz.Missed(); !reflect.DeepEqual(m, []string{"b", "d"}) {
		t.Errorf("missed = %v, want [b d]", m)
	}
	if !got.LabPassed("fencing-tokens", "04_fencing") || got.LabPassed("fencing-tokens", "01_cas") {
		t.Error("labs passed not kept")
	}
	if !l.LabsPassed["04_fencing"].Equal(t0) {
		t.Errorf("first pass time = %v, want %v", l.LabsPassed["04_fencing"], t0)
	}
}

func TestBestQuizKeepsTheHighestScore(t *testing.T) {
	p := New()
	p.RecordQuiz("x", QuizResult{Total: 4, Score: 3})
	p.RecordQuiz("x", QuizResult{Total: 4, Score: 1})
	if l := p.Lessons["x"]; l.BestQuiz != 0.75 || l.Quiz.Score != 1 {
		t.Fatalf("best = %v latest = %v; want 0.75 and 1", l.BestQuiz, l.Quiz.Score)
	}
}

func TestCorruptFileIsMovedAsideWithNotice(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":   "{not json",
		"empty":     "",
		"truncated": `{"version":1,"lessons":{"a":{"pages_read":[1,`,
		"future":    `{"version":99}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			p, n := Load(path, t0)
			if n == nil {
				t.Fatal("no notice for a corrupt file")
			}
			if p == nil || len(p.Lessons) != 0 {
				t.Fatalf("want fresh progress, got %+v", p)
			}
			want := path + ".corrupt-20261129T090000Z"
			if n.MovedTo != want {
				t.Fatalf("moved to %q, want %q", n.MovedTo, want)
			}
			if b, err := os.ReadFile(want); err != nil || string(b) != content {
				t.Fatalf("aside file = %q, %v; want the original bytes", b, err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("corrupt file still in place: %v", err)
			}
			if !strings.Contains(n.String(), want) {
				t.Errorf("notice %q does not say where the file went", n.String())
			}
			// The next save works and the next load is clean.
			if err := Save(path, p); err != nil {
				t.Fatal(err)
			}
			if _, n := Load(path, t0); n != nil {
				t.Fatalf("notice after a fresh save: %v", n)
			}
		})
	}
}

func TestUnreadablePathGivesNoticeNotCrash(t *testing.T) {
	// A directory where the file should be cannot be read as a file.
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	p, n := Load(path, t0)
	if n == nil || p == nil {
		t.Fatalf("want fresh progress and a notice, got %v %v", p, n)
	}
}

func TestSaveLeavesNoTempFilesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	p := New()
	for i := range 3 {
		p.MarkPageRead("l", i, t0)
		if err := Save(path, p); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name() != FileName || entries[1].Name() != FileName+lockSuffix {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("dir holds %v, want only %s and its lock", names, FileName)
	}
	got, _ := Load(path, t0)
	if len(got.Lessons["l"].PagesRead) != 3 {
		t.Fatalf("last save not visible: %+v", got.Lessons["l"])
	}
}

func TestSaveFailsWithContextWhenDirIsAFile(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Save(filepath.Join(blocker, FileName), New())
	if err == nil || !strings.Contains(err.Error(), "save progress") {
		t.Fatalf("err = %v, want a wrapped save error", err)
	}
}

func TestCloneIsDeep(t *testing.T) {
	p := New()
	p.MarkPageRead("l", 1, t0)
	p.RecordCheck("l", "q", Answer{Response: "1"})
	p.RecordQuiz("l", QuizResult{Total: 1, Answers: map[string]Answer{"q": {Response: "1"}}})
	p.RecordLabPassed("l", "01_cas", t0)
	c := p.Clone()
	p.MarkPageRead("l", 5, t0)
	p.Lessons["l"].Checks["q"] = Answer{Response: "changed"}
	p.Lessons["l"].Quiz.Answers["q"] = Answer{Response: "changed"}
	p.RecordLabPassed("l", "02_lock", t0)
	cl := c.Lessons["l"]
	if len(cl.PagesRead) != 1 || cl.Checks["q"].Response != "1" || cl.Quiz.Answers["q"].Response != "1" || len(cl.LabsPassed) != 1 {
		t.Fatalf("clone shares state with the original: %+v", cl)
	}
}

func TestDefaultPathUsesStateDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PLAYGROUND_STATE_DIR", dir)
	got, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if got != filepath.Join(dir, FileName) {
		t.Fatalf("path = %s", got)
	}
}
