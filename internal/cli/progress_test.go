package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/progress/report"
)

func TestProgressCommand(t *testing.T) {
	state := t.TempDir()
	t.Setenv("PLAYGROUND_STATE_DIR", state)
	path := filepath.Join(state, progress.FileName)
	now := time.Now()
	if _, err := progress.Update(path, func(p *progress.Progress) {
		p.MarkPageRead("consensus-and-cas", 0, now)
		p.MarkPageRead("consensus-and-cas", 1, now)
		p.RecordQuiz("consensus-and-cas", progress.QuizResult{Score: 3, Total: 6, Finished: now})
		p.RecordQuiz("consensus-and-cas", progress.QuizResult{Score: 6, Total: 6, Finished: now})
		p.RecordLabGrade("consensus-and-cas", "01_cas", progress.LabGrade{Status: "failing", Step: "Step 4", At: now})
		p.RecordExperimentRun("cas-race", true, now)
		p.RecordPrediction("cas-race", true, now)
	}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	code := Main(t.Context(), []string{"progress"}, strings.NewReader(""), &out, &out)
	text := out.String()
	if code != 0 {
		t.Fatalf("progress: exit %d\n%s", code, text)
	}
	for _, want := range []string{"pages 2/", "quiz best 100% (first 50%, 2 attempts)", "lab 2.1 01_cas", "failing at Step 4", "experiment cas-race", "ran 1 time, showed its effect, prediction right", "Total: pages 2/", "predictions 1/1 right"} {
		if !strings.Contains(text, want) {
			t.Errorf("progress output lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if code := Main(t.Context(), []string{"progress", "--json"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("progress --json: exit %d", code)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("progress --json: %v\n%s", err, out.String())
	}
	if r.Totals.PagesRead != 2 || r.Totals.QuizzesTaken != 1 || len(r.Lessons) < 9 {
		t.Errorf("JSON totals: %+v", r.Totals)
	}
	// The totals are named as the rest of the report is (snake case).
	if !strings.Contains(out.String(), `"labs_passed"`) || strings.Contains(out.String(), `"LabsPassed"`) {
		t.Errorf("progress --json totals are not in snake case:\n%s", out.String())
	}
	out.Reset()
	if code := Main(t.Context(), []string{"progress", "reset", "consensus-and-cas"}, strings.NewReader(""), &out, &out); code != 0 || !strings.Contains(out.String(), "Forgot lesson 2 Consensus stores and compare-and-swap") {
		t.Fatalf("reset: exit %d %s", code, out.String())
	}
	p, _ := progress.Load(path, now)
	if p.Peek("consensus-and-cas") != nil || p.Labs["01_cas"].Status != "failing" {
		t.Errorf("reset of a lesson: %+v %+v", p.Peek("consensus-and-cas"), p.Labs)
	}
	if code := Main(t.Context(), []string{"progress", "reset", "nope"}, strings.NewReader(""), &out, &out); code != 2 {
		t.Errorf("reset of an unknown target: exit %d, want 2", code)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
