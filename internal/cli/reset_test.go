package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
)

// TestProgressResetByWhatTheLearnerSees: reset takes a lesson's number, a
// lab's number in the course (3.1) or its folder, an experiment's name;
// a lesson's reset forgets its questions' review too; an unknown target
// lists the choices.
func TestProgressResetByWhatTheLearnerSees(t *testing.T) {
	state := t.TempDir()
	t.Setenv("PLAYGROUND_STATE_DIR", state)
	path := filepath.Join(state, progress.FileName)
	now := time.Now()
	c, _, err := loadCourse(&Env{}, "")
	if err != nil {
		t.Fatal(err)
	}
	missed := c.Lesson("locks-and-the-ttl-bug").Quiz.Questions[0].ID // whatever the course calls it today
	seed := func() {
		if _, err := progress.Update(path, func(p *progress.Progress) {
			p.MarkPageRead("locks-and-the-ttl-bug", 0, now)
			p.MarkPageRead("consensus-and-cas", 0, now)
			p.RecordLabGrade("locks-and-the-ttl-bug", "02_lock", progress.LabGrade{Status: progress.LabStatusPassed, At: now})
			p.RecordQuiz("locks-and-the-ttl-bug", progress.QuizResult{Total: 1, Finished: now,
				Answers: map[string]progress.Answer{missed: {Response: "1"}}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	reset := func(target string) (int, string) {
		var out strings.Builder
		code := Main(t.Context(), []string{"progress", "reset", target}, strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	seed()
	if code, out := reset("3"); code != 0 || !strings.Contains(out, "Forgot lesson 3 Locks and the TTL unlock bug") {
		t.Fatalf("reset 3: exit %d %s", code, out)
	}
	p, _ := progress.Load(path, now)
	if p.Peek("locks-and-the-ttl-bug") != nil || p.Peek("consensus-and-cas") == nil || len(p.Review) != 0 {
		t.Errorf("reset 3 forgot the wrong things: %+v review %+v", p.Lessons, p.Review)
	}
	for _, target := range []string{"3.1", "lab 3.1", "02_lock"} {
		seed()
		if code, out := reset(target); code != 0 || !strings.Contains(out, "Forgot lab 3.1 (02_lock)") {
			t.Fatalf("reset %s: exit %d %s", target, code, out)
		}
		if p, _ := progress.Load(path, now); p.LabPassed("locks-and-the-ttl-bug", "02_lock") || p.Peek("locks-and-the-ttl-bug") == nil {
			t.Errorf("reset %s: lab still passed or lesson gone", target)
		}
	}
	code, out := reset("9.9")
	for _, want := range []string{`nothing called "9.9"`, "a lesson by its number: 1, 2, 3", "3.1 (02_lock)", "7.3 (08_herd)", "an experiment: ", "all: everything"} {
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("reset 9.9: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
}
