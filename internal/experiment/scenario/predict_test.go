package scenario

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
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
func checkPrediction(t *testing.T, sc *experiment.Scenario, h *history.History) {
	t.Helper()
	for _, ok := range sc.Predict.Judge(h) {
		if ok {
			return
		}
	}
	t.Errorf("%s: the run bore out none of the prediction's options", sc.Name)
}

// TestFencingJudgedPerPart: the fencing prediction is judged on each part
// the run had, so a run of one variant bears out the answers that say
// what that variant did, and a run of both only the one right for both.
func TestFencingJudgedPerPart(t *testing.T) {
	part := func(on, taken bool) []history.Event {
		z, n := "a1", "a3"
		if on {
			z, n = "b1", "b3"
		}
		late := history.Event{At: 70, Kind: history.WriteAccepted, Replica: z, Token: 2, Facts: &history.Facts{Op: "write", Token: 2, Succeeded: true}}
		if !taken {
			late.Kind, late.Facts = history.WriteRejected, &history.Facts{Op: "write", Token: 2, Highest: 3}
		}
		return []history.Event{{Kind: history.PartBegins, Text: fencingPart(on)},
			{At: 10, Kind: history.Acquired, Replica: z, Token: 2}, {At: 30, Kind: history.Paused, Replica: z},
			{At: 40, Kind: history.Acquired, Replica: n, Token: 3}, {At: 50, Kind: history.WriteAccepted, Replica: n, Token: 3, Facts: &history.Facts{Op: "write", Token: 3, Succeeded: true}},
			{At: 60, Kind: history.Resumed, Replica: z}, late}
	}
	q := fencingQuestion
	for _, c := range []struct {
		name   string
		events []history.Event
		want   []bool // off-taken/on-refused, refused both, taken both, none
	}{
		{"both parts", append(part(false, true), part(true, false)...), []bool{true, false, false, false}},
		{"fencing on only", part(true, false), []bool{true, true, false, false}},
		{"fencing off only", part(false, true), []bool{true, false, true, false}},
		{"fencing on, taken anyway", part(true, true), []bool{false, false, true, false}},
		{"no fencing part", nil, []bool{false, false, false, false}},
	} {
		h := history.History{Scenario: "fencing", Events: c.events}
		if got := q.Judge(&h); !slices.Equal(got, c.want) {
			t.Errorf("%s: judged %v, want %v", c.name, got, c.want)
		}
	}
}

// TestUnlockJudgedPerPart: the ttl-unlock-bug prediction asks what P3
// was answered after each unlock, and is judged on each part the run
// had, as fencing's is.
func TestUnlockJudgedPerPart(t *testing.T) {
	part := func(versioned, takes bool) []history.Event {
		name, key := naivePart, "lock-naive"
		if versioned {
			name, key = versionedPart, "lock-versioned"
		}
		try := history.Event{At: 50, Kind: history.Acquired, Replica: "p3", Token: 10, Facts: &history.Facts{Op: "txn", Key: key, Succeeded: true}}
		if !takes {
			try = history.Event{At: 50, Kind: history.Note, Replica: "p3", Facts: &history.Facts{Op: "txn", Key: key, Held: &history.StoreKey{Key: key, Value: "p2", CreateRevision: 7}}}
		}
		return []history.Event{{Kind: history.PartBegins, Text: name},
			acquired(0, "p1", 5, key), ev(5, history.Paused, "p1"), acquired(20, "p2", 7, key), ev(30, history.Resumed, "p1"), try}
	}
	q := unlockQuestion
	for _, c := range []struct {
		name   string
		events []history.Event
		want   []bool // naive free/versioned P2, P2 both, free both, naive P2/versioned free
	}{
		{"both parts", append(part(false, true), part(true, false)...), []bool{true, false, false, false}},
		{"naive only", part(false, true), []bool{true, false, true, false}},
		{"versioned only", part(true, false), []bool{true, true, false, false}},
		{"versioned, P3 takes it", part(true, true), []bool{false, false, true, true}},
		{"both parts, P2 both times", append(part(false, false), part(true, false)...), []bool{false, true, false, false}},
		{"no part", nil, []bool{false, false, false, false}},
	} {
		h := history.History{Scenario: "ttl-unlock-bug", Events: c.events}
		if got := q.Judge(&h); !slices.Equal(got, c.want) {
			t.Errorf("%s: judged %v, want %v", c.name, got, c.want)
		}
	}
}
