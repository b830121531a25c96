package experiment

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

// words is the set of a text's lower-case words.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z0-9]+`).FindAllString(strings.ToLower(s), -1) {
		out[w] = true
	}
	return out
}

// similar is the share of words two texts have in common (Jaccard).
func similar(a, b string) float64 {
	wa, wb := words(a), words(b)
	both := 0
	for w := range wa {
		if wb[w] {
			both++
		}
	}
	all := len(wa) + len(wb) - both
	if all == 0 {
		return 1
	}
	return float64(both) / float64(all)
}

// TestPredictionsAsk: every scenario asks a prediction of its own, not a
// question a lesson page already asked (the built-in course, every
// question of every quiz), and its header (title, summary, faults) gives
// no option away, nor any number an option asks about.
func TestPredictionsAsk(t *testing.T) {
	c, err := lessons.Load(lessons.Sources{Course: content.FS()})
	if err != nil {
		t.Fatal(err)
	}
	var asked []*quiz.Question
	for _, l := range c.Lessons {
		if l.Quiz != nil {
			asked = append(asked, l.Quiz.Questions...)
		}
	}
	number := regexp.MustCompile(`\b\d+(\.\d+)?\b`)
	for _, sc := range Scenarios() {
		q := sc.Predict
		if q == nil || len(q.Options) < 2 {
			t.Errorf("%s: no prediction with at least two options", sc.Name)
			continue
		}
		for _, page := range asked {
			if s := similar(q.Prompt, page.Prompt); s >= 0.5 {
				t.Errorf("%s: its prediction is %s's question (%.0f%% the same words):\n%s\n%s", sc.Name, page.ID, 100*s, q.Prompt, page.Prompt)
			}
		}
		header := strings.ToLower(sc.Title + " " + sc.Summary + " " + sc.Faults)
		for _, o := range q.Options {
			if strings.Contains(header, strings.ToLower(o.Text)) || similar(o.Text, sc.Summary) >= 0.5 {
				t.Errorf("%s: the header gives the option %q away", sc.Name, o.Text)
			}
			for _, n := range number.FindAllString(o.Text, -1) {
				if !strings.Contains(q.Prompt, n) && strings.Contains(header, n) {
					t.Errorf("%s: the header shows %s, which the option %q asks about", sc.Name, n, o.Text)
				}
			}
		}
	}
}

// checkPrediction: a run bears out at least one option of its scenario's
// prediction, so the learner's pick can always be set beside it.
func checkPrediction(t *testing.T, sc *Scenario, h *History) {
	t.Helper()
	for _, ok := range sc.Predict.Judge(h) {
		if ok {
			return
		}
	}
	t.Errorf("%s: the run bore out none of the prediction's options", sc.Name)
}
