// Package quiz gives the course's questions: their kinds, the quiz.yaml
// parser (every problem named by file, line and field), deterministic
// per-learner option shuffling and pure grading with partial credit.
//
// It knows nothing about terminals: the TUI and the plain-text mode of
// `playground quiz` both show a Question, fill a Response and call Grade.
package quiz

import "fmt"

// Kind is the kind of a question, as written in quiz.yaml.
type Kind string

// The question kinds.
const (
	Single  Kind = "single"  // pick exactly one option
	Multi   Kind = "multi"   // select all that apply
	Numeric Kind = "numeric" // type a number, graded within a tolerance
	Order   Kind = "order"   // put events in order
	Predict Kind = "predict" // like Single, answered before an experiment runs
)

// Kinds lists every kind, in the order the format guide presents them.
var Kinds = []Kind{Single, Multi, Numeric, Order, Predict}

// HasOptions reports whether questions of this kind are answered by
// choosing among Options (single, multi, predict).
func (k Kind) HasOptions() bool { return k == Single || k == Multi || k == Predict }

// Instruction is what a learner is asked to do with a question of this
// kind, as a short phrase ("choose one", "put in order").
func (k Kind) Instruction() string {
	switch k {
	case Multi:
		return "select all that apply"
	case Numeric:
		return "type a number"
	case Order:
		return "put in order"
	case Predict:
		return "predict the outcome"
	}
	return "choose one"
}

// Quiz is one quiz.yaml file: the questions of one lesson.
type Quiz struct {
	ID        string
	Title     string
	Questions []*Question
	Path      string // the file it was parsed from, as given to Parse
}

// Question returns the question with the given id, or nil.
func (q *Quiz) Question(id string) *Question {
	for _, x := range q.Questions {
		if x.ID == id {
			return x
		}
	}
	return nil
}

// Question is one question of a quiz.
type Question struct {
	ID       string
	Kind     Kind
	Prompt   string // Markdown
	Takeaway string // one or two sentences shown after any answer

	// Options are the choices of single, multi and predict questions, in
	// file order. Responses and feedback index into this slice; Shuffle
	// gives the order to display them in.
	Options []Option

	// Items are the events of an order question, in the CORRECT order.
	// They are displayed shuffled (Shuffle).
	Items []Option

	// Numeric questions: the right Answer, the accepted absolute
	// Tolerance, the Unit shown after the input ("s", "%", may be empty)
	// and the Explain text shown after answering.
	Answer    float64
	Tolerance float64
	Unit      string
	Explain   string

	// Experiment names the experiment a predict question is about; the
	// learner answers first and then sees the experiment's real outcome.
	Experiment string

	Line int // line of the question in its file
}

// Option is one choice of a question (or one event of an order question).
type Option struct {
	Text    string
	Correct bool   // single/multi/predict: this option is (one of) the right answer(s)
	Pin     bool   // keep this option's position when shuffling
	Explain string // shown after answering, whether it was picked or not
	Line    int
}

// Correct returns the indices of the correct options, in file order.
func (q *Question) Correct() []int {
	var out []int
	for i, o := range q.Options {
		if o.Correct {
			out = append(out, i)
		}
	}
	return out
}

// Choices returns the number of things the learner arranges or picks
// from: len(Items) for order questions, len(Options) otherwise.
func (q *Question) Choices() int {
	if q.Kind == Order {
		return len(q.Items)
	}
	return len(q.Options)
}

// Problem is one thing wrong with a course file, reported as
// "path:line: message". Line is 1-based; 0 means the whole file.
type Problem struct {
	Path string
	Line int
	Msg  string
}

// String formats the problem the way compilers do, so editors can jump to it.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.Path, p.Msg)
}

// Error lets a Problem be returned as an error.
func (p Problem) Error() string { return p.String() }
