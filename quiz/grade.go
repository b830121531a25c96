package quiz

import (
	"fmt"
	"math"
)

// Response is what the learner answered to one question. Indices always
// refer to the question's own slices in file order (Options or Items),
// never to display positions: map those through the order Shuffle gave.
type Response struct {
	QuestionID string
	// Picked holds the chosen option indices (single, predict: exactly
	// one; multi: any number, possibly none).
	Picked []int
	// Order holds item indices in the order the learner put them (order
	// questions: every item exactly once).
	Order []int
	// Number is the value typed for a numeric question.
	Number float64
}

// Result is the graded answer with everything feedback needs.
type Result struct {
	Score   float64 // between 0 and 1
	Correct bool    // full marks
	// Options has one entry per option (single, multi, predict) or per
	// item (order), in file order, which for order is the correct order.
	Options []Feedback
	// Explain is the explanation of a numeric question's answer.
	Explain  string
	Takeaway string
}

// Feedback is what to show about one option or item after answering.
type Feedback struct {
	Text    string
	Explain string
	// Correct: for choices, the option is (one of) the right answer(s);
	// for order items, the learner put the item in its right place.
	Correct bool
	// Picked: for choices, the learner chose it.
	Picked bool
	// Position is where the learner put an order item (0-based), and
	// Want is where it belongs; both -1 for choices.
	Position, Want int
}

// Validate reports whether r is a complete, well-formed answer to q, with
// a one-line message meant for the learner when it is not.
func Validate(q *Question, r Response) error {
	switch q.Kind {
	case Single, Predict:
		if len(r.Picked) != 1 {
			return fmt.Errorf("pick exactly one option")
		}
		return inRange(r.Picked, len(q.Options))
	case Multi:
		if err := inRange(r.Picked, len(q.Options)); err != nil {
			return err
		}
		return distinct(r.Picked)
	case Order:
		if len(r.Order) != len(q.Items) {
			return fmt.Errorf("put all %d events in order, each once", len(q.Items))
		}
		if err := inRange(r.Order, len(q.Items)); err != nil {
			return err
		}
		return distinct(r.Order)
	case Numeric:
		if math.IsNaN(r.Number) || math.IsInf(r.Number, 0) {
			return fmt.Errorf("type a finite number")
		}
		return nil
	}
	return fmt.Errorf("question %s has unknown kind %q", q.ID, q.Kind)
}

func inRange(idx []int, n int) error {
	for _, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("choose numbers from 1 to %d", n)
		}
	}
	return nil
}

func distinct(idx []int) error {
	seen := map[int]bool{}
	for _, i := range idx {
		if seen[i] {
			return fmt.Errorf("name each number only once")
		}
		seen[i] = true
	}
	return nil
}

// Grade scores r against q. It is pure: the same inputs always give the
// same Result. The partial-credit rules are in content/README.md:
//   - single, predict and numeric score 1 or 0;
//   - multi scores the share of options classified right (ticked when
//     correct, left when wrong);
//   - order counts the neighbouring events (in the correct order) that the
//     learner put in the right relative order, and scores the share of
//     those above the half that a random order gets.
//
// Correct is true only with full marks. An invalid response (see
// Validate) is an error.
func Grade(q *Question, r Response) (Result, error) {
	if err := Validate(q, r); err != nil {
		return Result{}, fmt.Errorf("grade question %s: %w", q.ID, err)
	}
	res := Result{Takeaway: q.Takeaway, Explain: q.Explain}
	switch q.Kind {
	case Single, Predict, Multi:
		picked := map[int]bool{}
		for _, i := range r.Picked {
			picked[i] = true
		}
		right := 0
		for i, o := range q.Options {
			if picked[i] == o.Correct {
				right++
			}
			res.Options = append(res.Options, Feedback{Text: o.Text, Explain: o.Explain,
				Correct: o.Correct, Picked: picked[i], Position: -1, Want: -1})
		}
		if q.Kind == Multi {
			res.Score = float64(right) / float64(len(q.Options))
		} else if q.Options[r.Picked[0]].Correct {
			res.Score = 1
		}
	case Order:
		pos := make([]int, len(q.Items))
		for p, i := range r.Order {
			pos[i] = p
		}
		// Credit above chance: a random order puts half of the n-1
		// neighbouring pairs the right way round, so only pairs beyond
		// that half earn marks, and no arrangement a learner could get
		// without knowing the answer (such as the shown one) scores.
		pairs := float64(orderedPairs(r.Order))
		chance := float64(len(q.Items)-1) / 2
		res.Score = max(0, (pairs-chance)/(float64(len(q.Items)-1)-chance))
		for i, it := range q.Items {
			res.Options = append(res.Options, Feedback{Text: it.Text, Explain: it.Explain,
				Correct: pos[i] == i, Position: pos[i], Want: i})
		}
	case Numeric:
		if NumberMatches(q, r.Number) {
			res.Score = 1
		}
	}
	res.Correct = res.Score == 1
	return res, nil
}

// NumberMatches reports whether x is within the tolerance of a numeric
// question's answer. A hair of slack absorbs decimal rounding (0.1+0.2).
func NumberMatches(q *Question, x float64) bool {
	slack := 1e-9 * math.Max(1, math.Abs(q.Answer))
	return math.Abs(x-q.Answer) <= q.Tolerance+slack
}
