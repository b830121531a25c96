package experiment

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/quiz"
)

// The prediction is the scenario's own question (experiment.Question),
// never a lesson's checkpoint: the learner picks an outcome, the run
// carries the pick (Env.Prediction), and once it ends the pick is judged
// against what that run did, not against a key. The first judgement
// goes to the learner's review schedule (progress.PredictReviewID).

// predictQuiz is sc's prediction as a quiz question, for the option
// order (quiz.Shuffle) and for review; correct marks, option by option,
// what a run bore out (nil: none known).
func predictQuiz(sc *experiment.Scenario, correct ...bool) *quiz.Question {
	q := &quiz.Question{ID: progress.PredictReviewID(sc.Name), Kind: quiz.Predict, Prompt: sc.Predict.Prompt, Experiment: sc.Name}
	for i, o := range sc.Predict.Options {
		q.Options = append(q.Options, quiz.Option{Text: o.Text, Correct: i < len(correct) && correct[i]})
	}
	return q
}

// judgePrediction keeps the finished run's judgement of the pick (the
// history records it) and which options the run bore out.
func (m *Model) judgePrediction(h *history.History) {
	m.predicted, m.outcome = h.Prediction, nil
	if q := m.sc.Predict; q != nil && m.picked >= 0 {
		m.outcome = q.Judge(h)
	}
}

// judged tells the root how the prediction fared in the run it was made
// for (later runs of the same screen judge it again on screen only).
func (m *Model) judged() tea.Cmd {
	if !m.judge || m.predicted == nil || m.predicted.Unjudged != "" {
		return nil // a run that could not judge it leaves it for the next
	}
	m.judge = false
	return screen.Send(screen.Predicted{Name: m.sc.Name, Question: progress.PredictReviewID(m.sc.Name), Right: m.predicted.Correct, Outcome: m.outcomeTexts()})
}

// outcomeTexts are the options the last run bore out.
func (m Model) outcomeTexts() []string {
	var out []string
	for i, ok := range m.outcome {
		if ok {
			out = append(out, m.sc.Predict.Options[i].Text)
		}
	}
	return out
}

// ReviewQuestion is the prediction with review id id as a question to
// ask again, its right options those the learner's judged run bore out
// (outcome, as Predicted carried them); nil when id is no scenario's
// prediction or the outcome names none of its options.
func ReviewQuestion(id string, outcome []string) *quiz.Question {
	name, ok := progress.PredictReviewExperiment(id)
	sc := scenario.Lookup(name)
	if !ok || sc == nil || sc.Predict == nil {
		return nil
	}
	correct := make([]bool, len(sc.Predict.Options))
	any := false
	for i, o := range sc.Predict.Options {
		for _, t := range outcome {
			if t == o.Text {
				correct[i], any = true, true
			}
		}
	}
	if !any {
		return nil
	}
	q := predictQuiz(sc, correct...)
	// Asked days later, away from the experiment's screen, the question
	// brings what it is about: the experiment and what it does, and, once
	// answered, what the learner's run did (x runs it again).
	q.Prompt = fmt.Sprintf("Experiment %s: %s. %s\n\n%s", sc.Name, sc.Title, sc.Summary, q.Prompt)
	q.Takeaway = "In your run of " + sc.Name + ": " + strings.Join(outcome, "; ") + "."
	return q
}
