package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/progress"
)

// oldLesson names both renamed scenarios by their old names, in each
// place a lesson can name an experiment.
const oldLesson = `---
id: first-steps
title: First steps
summary: Where the course begins.
objectives:
  - Say what a lease is.
experiments: [thundering-herd, leader-change-extends-leases]
labs: []
quiz: first-steps
---

# Try it

Run the experiments.

@check herd-predict
@try experiment thundering-herd
@try experiment leader-change-extends-leases
`

const oldQuiz = `id: first-steps
title: First steps
questions:
  - id: herd-predict
    kind: predict
    experiment: thundering-herd
    prompt: How many waiters wake per release when each watches the one ahead?
    takeaway: A predecessor watch wakes one waiter per release.
    options:
      - {text: About one, correct: true, explain: Only the next in line hears the delete.}
      - {text: All of them, explain: They watch different keys.}
`

// TestExperimentOldNamesInACourse: a course written before the renames
// passes check, and loads with the current names everywhere, so the
// screens and the saved progress know one name.
func TestExperimentOldNamesInACourse(t *testing.T) {
	withTestLabs(t)
	dir := t.TempDir()
	lesson := filepath.Join(dir, "lessons", "01-first-steps")
	if err := os.MkdirAll(lesson, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"lesson.md": oldLesson, "quiz.yaml": oldQuiz} {
		if err := os.WriteFile(filepath.Join(lesson, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := run(t, "", "check", dir); code != 0 || !strings.HasSuffix(out, "no problems\n") {
		t.Fatalf("check of a course with old names exited %d:\n%s%s", code, out, errOut)
	}
	c, probs, err := loadCourse(&Env{}, dir)
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	l := c.Lessons[0]
	if got := strings.Join(l.Experiments, " "); got != "lock-waiters leader-change" {
		t.Errorf("front matter experiments read as %q", got)
	}
	tries := l.Pages[0].Tries
	if len(tries) != 2 || tries[0].Name != "lock-waiters" || tries[1].Name != "leader-change" {
		t.Errorf("@try lines read as %+v", tries)
	}
	if q := l.Quiz.Questions[0]; q.Experiment != "lock-waiters" {
		t.Errorf("the predict question's experiment read as %q", q.Experiment)
	}
}

// TestExperimentRunAndReplayTakeOldNames: run and replay accept a
// scenario's old name, and a history file recorded under it replays, and
// its schedule runs with --faults. The runs stop at a flag out of range,
// past the name's lookup and the history's check, without starting etcd.
func TestExperimentRunAndReplayTakeOldNames(t *testing.T) {
	code, _, errOut := run(t, "", "experiment", "run", "thundering-herd", "--replicas", "999")
	if code != 2 || !strings.Contains(errOut, "lock-waiters runs 10 to 50") {
		t.Errorf("run thundering-herd --replicas 999: exit %d, %q; want the range of lock-waiters", code, errOut)
	}
	rec := filepath.Join(t.TempDir(), "old.json")
	h := history.History{Format: history.HistoryFormat, Scenario: "thundering-herd",
		Params:  history.Params{Replicas: 20, TTL: 5, Seed: 1},
		Verdict: &history.Verdict{Scenario: "thundering-herd", Summary: "as recorded"}}
	writeHistory(t, rec, h)
	// The verdict is the lock-waiters checker's, not the one recorded.
	code, out, errOut := run(t, "", "experiment", "replay", rec)
	if code == 2 || !strings.Contains(out, "both ways of waiting") {
		t.Errorf("replay of a history under the old name: exit %d:\n%s%s", code, out, errOut)
	}
	for _, name := range []string{"lock-waiters", "thundering-herd"} {
		code, _, errOut = run(t, "", "experiment", "run", name, "--faults", rec, "--replicas", "999")
		if code != 2 || !strings.Contains(errOut, "lock-waiters runs 10 to 50") {
			t.Errorf("run %s --faults (a history under the old name): exit %d, %q", name, code, errOut)
		}
	}
}

// TestExperimentProgressResetByOldName: progress reset takes an
// experiment's old name and forgets its record, kept under the new one.
func TestExperimentProgressResetByOldName(t *testing.T) {
	state := t.TempDir()
	t.Setenv("PLAYGROUND_STATE_DIR", state)
	path := filepath.Join(state, progress.FileName)
	if _, err := progress.Update(path, func(p *progress.Progress) { p.RecordExperimentRun("lock-waiters", true, time.Now()) }); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "", "progress", "reset", "thundering-herd")
	if code != 0 || !strings.Contains(out, "experiment lock-waiters") {
		t.Fatalf("progress reset thundering-herd: exit %d\n%s%s", code, out, errOut)
	}
	if p, _ := progress.Load(path, time.Now()); p.Experiments["lock-waiters"].Runs != 0 {
		t.Errorf("lock-waiters still has %+v", p.Experiments["lock-waiters"])
	}
}
