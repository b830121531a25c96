package experiment

import "github.com/ownership-election/playground/internal/history"

// Question is a scenario's prediction, asked before the run. It asks
// about something the checker finds in the history, so after the run the
// learner's pick stands beside what happened in that very run: an option
// is right when the run bore it out (Judge), not because a key says so.
// It is the scenario's own, not a question a lesson page already asked.
type Question struct {
	Prompt  string
	Options []Option
	// Unjudged, when set, says why a run cannot judge the pick ("" when
	// it can): what happened in it is not the story the question asks
	// about (the learner's own fault changed it), so no option is right
	// or wrong by it.
	Unjudged func(h *history.History) string
}

// Option is one outcome a learner may predict.
type Option struct {
	Text string
	// Happened reports whether the history bears the outcome out.
	Happened func(h *history.History) bool
}

// Judge says, option by option, whether the run's history bore it out.
func (q *Question) Judge(h *history.History) []bool {
	out := make([]bool, len(q.Options))
	for i, o := range q.Options {
		out[i] = o.Happened(h)
	}
	return out
}

// Predicted records the learner's pick in the history, judged by it, for
// the screen and the saved file.
func (q *Question) Predicted(h *history.History, picked int) {
	if picked < 0 || picked >= len(q.Options) {
		return
	}
	p := &history.Prediction{Question: q.Prompt, Picked: q.Options[picked].Text}
	if q.Unjudged != nil {
		p.Unjudged = q.Unjudged(h)
	}
	if p.Unjudged == "" {
		p.Correct = q.Judge(h)[picked]
	}
	h.Prediction = p
}
