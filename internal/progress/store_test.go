package progress

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Two programs on one state directory, each with the copy of the progress
// it loaded at start: what either records survives the other's saves.
func TestTwoWritersLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	a, _ := Load(path, t0) // a TUI
	b, _ := Load(path, t0) // another TUI, or playground grade

	a.MarkPageRead("leases", 0, t0)
	if err := Save(path, a); err != nil {
		t.Fatal(err)
	}
	b.RecordLabPassed("leases", "02_lease", t0.Add(time.Second))
	if err := Save(path, b); err != nil {
		t.Fatal(err)
	}
	// a turns a page: its copy knows nothing of b's pass.
	a.MarkPageRead("leases", 1, t0.Add(2*time.Second))
	if err := Save(path, a); err != nil {
		t.Fatal(err)
	}
	b.RecordCheck("fencing", "zombie", Answer{Response: "2", Score: 1, Correct: true, At: t0.Add(3 * time.Second)})
	if err := Save(path, b); err != nil {
		t.Fatal(err)
	}

	got, n := Load(path, t0)
	if n != nil {
		t.Fatal(n)
	}
	if !got.LabPassed("leases", "02_lease") {
		t.Error("b's lab pass was lost")
	}
	if l := got.Peek("leases"); l == nil || len(l.PagesRead) != 2 {
		t.Errorf("a's pages were lost: %+v", l)
	}
	if got.Peek("fencing") == nil || !got.Peek("fencing").Checks["zombie"].Correct {
		t.Error("b's check answer was lost")
	}
	if got.Last != (Position{Lesson: "leases", Page: 1}) {
		t.Errorf("last = %+v, want the most recent place, leases page 1", got.Last)
	}
}

// Many writers at once, each with its own lock file descriptor, interleave
// read-change-write cycles; every change must be in the final file.
func TestConcurrentUpdatesAllSurvive(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := Update(path, func(p *Progress) {
					p.RecordCheck("l", fmt.Sprintf("w%d-%d", w, i), Answer{Response: "1", At: t0})
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, _ := Load(path, t0)
	if n := len(got.Peek("l").Checks); n != writers*each {
		t.Fatalf("%d answers on disk, want %d", n, writers*each)
	}
}

// The same across processes: the helper below runs as separate programs.
func TestUpdatesFromTwoProcessesAllSurvive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), FileName)
	const each = 40
	var cmds []*exec.Cmd
	for w := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
		cmd.Env = append(os.Environ(), "PROGRESS_HELPER_PATH="+path, "PROGRESS_HELPER_ID="+strconv.Itoa(w), "PROGRESS_HELPER_N="+strconv.Itoa(each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	got, _ := Load(path, t0)
	if n := len(got.Peek("l").Checks); n != 2*each {
		t.Fatalf("%d answers on disk, want %d", n, 2*each)
	}
}

// TestHelperWriter is a writer process for the test above; it does nothing
// when run on its own.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv("PROGRESS_HELPER_PATH")
	if path == "" {
		return
	}
	n, _ := strconv.Atoi(os.Getenv("PROGRESS_HELPER_N"))
	id := os.Getenv("PROGRESS_HELPER_ID")
	// Like a TUI: one in-memory copy, saved after every change.
	mine := New()
	for i := range n {
		mine.RecordCheck("l", fmt.Sprintf("p%s-%d", id, i), Answer{Response: "1", At: t0})
		if err := Save(path, mine); err != nil {
			t.Fatal(err)
		}
	}
}

// A writer killed between creating its temporary file and renaming it
// leaves the file behind; the next writer removes it.
func TestStaleTempFilesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	stale := filepath.Join(dir, FileName+".tmp-123456")
	if err := os.WriteFile(stale, []byte(`{"version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.tmp-1")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Update(path, func(p *Progress) { p.MarkPageRead("l", 0, t0) }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temp file still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a file that is not ours was touched: %v", err)
	}
}

// At start, before anything is saved, Tidy clears the same files.
func TestTidyRemovesStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	stale := path + ".tmp-42"
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Tidy(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temp file still there: %v", err)
	}
	if err := Tidy(filepath.Join(dir, "missing", FileName)); err != nil {
		t.Fatalf("tidy of a state dir not made yet: %v", err)
	}
}

func TestHandEditedValuesAreClamped(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	content := `{"version":1,"lessons":{"l":{"pages_read":[3,-1,3,0],"last_page":-4,"best_quiz":7,
		"checks":{"q":{"response":"1","score":-2}},
		"quiz":{"quiz_id":"l","answers":{"a":{"score":9}},"score":50,"total":4}}},"last":{"lesson":"l","page":-3}}`
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, n := Load(path, t0)
	if n != nil {
		t.Fatal(n)
	}
	l := p.Peek("l")
	if l.BestQuiz != 1 || l.Quiz.Share() != 1 || l.Quiz.Answers["a"].Score != 1 || l.Checks["q"].Score != 0 {
		t.Errorf("scores not clamped: best %v share %v answer %v check %v", l.BestQuiz, l.Quiz.Share(), l.Quiz.Answers["a"].Score, l.Checks["q"].Score)
	}
	if fmt.Sprint(l.PagesRead) != "[0 3]" || l.LastPage != 0 || p.Last.Page != 0 {
		t.Errorf("pages not cleaned: %v last %d position %+v", l.PagesRead, l.LastPage, p.Last)
	}
}

func TestMergeKeepsFirstPassAndNewestAnswers(t *testing.T) {
	p, o := New(), New()
	p.RecordLabPassed("l", "01", t0.Add(time.Hour))
	o.RecordLabPassed("l", "01", t0)
	p.RecordCheck("l", "q", Answer{Response: "old", At: t0})
	o.RecordCheck("l", "q", Answer{Response: "new", At: t0.Add(time.Minute)})
	p.RecordQuiz("l", QuizResult{Total: 2, Score: 2, Finished: t0})
	o.RecordQuiz("l", QuizResult{Total: 2, Score: 1, Finished: t0.Add(time.Minute)})
	p.Merge(o)
	l := p.Peek("l")
	if !l.LabsPassed["01"].Equal(t0) || l.Checks["q"].Response != "new" || l.Quiz.Score != 1 || l.BestQuiz != 1 {
		t.Fatalf("merged = %+v (quiz %+v)", l, l.Quiz)
	}
}
