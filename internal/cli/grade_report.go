package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

// reporter prints the grading of the labs as it goes: text for a person,
// or one JSON object per lab.
type reporter interface {
	start(lab *lessons.Lab)
	steps(r *grade.Report)
	verifying(o grade.Options) (stop func())
	done(out *labOutcome) error
	summary(outs []*labOutcome)
}

func newReporter(w io.Writer, asJSON bool, c *lessons.Course) reporter {
	if asJSON {
		return jsonReporter{w: w}
	}
	return textReporter{w: w, course: c}
}

type textReporter struct {
	w      io.Writer
	course *lessons.Course
}

func (t textReporter) start(lab *lessons.Lab) {
	// Numbered by lesson as the course shows it, with the folder.
	head := t.course.LabName(lab.ID) + " (" + lab.ID + ")  " + lab.Title
	if l := t.course.Lesson(lab.Lesson); l != nil {
		head += fmt.Sprintf("  (lesson %d: %s)", l.Number, l.Title)
	}
	fmt.Fprintln(t.w, head)
}

func (t textReporter) steps(r *grade.Report) { printSteps(t.w, r) }

func (t textReporter) verifying(o grade.Options) func() { return announceVerify(t.w, o) }

func (t textReporter) done(out *labOutcome) error {
	switch {
	case out.Refused != nil:
		fmt.Fprintln(t.w, "  REFUSED: this lab is not graded until these are fixed:")
		for _, r := range out.Refused.Refusals {
			fmt.Fprintf(t.w, "    %s\n", r)
		}
		fmt.Fprintln(t.w)
	case out.NotGradable != "":
		fmt.Fprintf(t.w, "  NOT GRADABLE (not your code's fault): %s\n\n", out.NotGradable)
	default:
		printVerdict(t.w, out.Report)
	}
	return nil
}

func (t textReporter) summary(outs []*labOutcome) {
	passed := 0
	var failed []string
	for _, o := range outs {
		if o.Passed() {
			passed++
		} else {
			failed = append(failed, fmt.Sprintf("%s (%s)", o.Lab.ID, o.Status()))
		}
	}
	fmt.Fprintf(t.w, "%d of %d labs passed", passed, len(outs))
	if len(failed) > 0 {
		fmt.Fprintf(t.w, "; not passed: %s", strings.Join(failed, ", "))
	}
	fmt.Fprintln(t.w)
}

type jsonReporter struct{ w io.Writer }

func (jsonReporter) start(*lessons.Lab)             {}
func (jsonReporter) steps(*grade.Report)            {}
func (jsonReporter) verifying(grade.Options) func() { return func() {} }
func (jsonReporter) summary([]*labOutcome)          {}

func (j jsonReporter) done(out *labOutcome) error {
	if err := json.NewEncoder(j.w).Encode(jsonReport(out)); err != nil {
		return fmt.Errorf("grade: write JSON: %w", err)
	}
	return nil
}

// stepMark is how a step's status reads in the text output.
func stepMark(s grade.Status) string {
	switch s {
	case grade.Pass:
		return "ok  "
	case grade.Fail:
		return "FAIL"
	case grade.Skip:
		return "skip"
	default:
		return "--  "
	}
}

func printSteps(w io.Writer, r *grade.Report) {
	if res := r.Result; res != nil && res.BuildFailed {
		fmt.Fprintf(w, "  %s\n", r.Message)
		return
	}
	for i, s := range r.Steps {
		mark := stepMark(s.Status)
		unconfirmed := s.Status == grade.Pass && !r.PassConfirmed(i)
		if unconfirmed {
			mark = stepMark(grade.NotRun)
		}
		fmt.Fprintf(w, "  %s step %d: %s", mark, i+1, s.Title)
		switch {
		case unconfirmed:
			fmt.Fprint(w, " (passed a first run; not verified under -race)")
		case s.Status == grade.Pass:
			fmt.Fprintf(w, " (%.2fs)", s.Elapsed.Seconds())
		case s.Status == grade.NotRun:
			fmt.Fprint(w, " (not run)")
		}
		fmt.Fprintln(w)
		lines := s.Summary // every failing subtest, each with its first line
		if m := s.Message(); m != "" && len(lines) == 0 {
			lines = []string{m}
		}
		for _, l := range lines {
			fmt.Fprintf(w, "         %s\n", l)
		}
	}
}

func printVerdict(w io.Writer, r *grade.Report) {
	switch r.Status {
	case grade.LabPassed:
		fmt.Fprintf(w, "  PASS: every step, verified by %d runs under the race detector (%.1fs + %.1fs)\n\n", grade.VerifyCount, r.Elapsed.Seconds(), r.Verify.Elapsed.Seconds())
	case grade.LabRacy:
		fmt.Fprintf(w, "  RACY: %s\n\n", r.Message)
	case grade.LabFlaky:
		fmt.Fprintf(w, "  FLAKY: %s\n\n", r.Message)
	case grade.LabFailed:
		if res := r.Result; res != nil && res.Message != "" {
			fmt.Fprintf(w, "  FAIL: %s\n\n", res.Message)
		} else {
			fmt.Fprintf(w, "  FAIL: %d of %d steps passed\n\n", r.StepsPassed(), len(r.Steps))
		}
	default:
		fmt.Fprintf(w, "  %s: %s\n\n", strings.ToUpper(string(r.Status)), r.Message)
	}
}

// The --json shape, one object per lab.
type jsonLab struct {
	Lab      string      `json:"lab"`
	Title    string      `json:"title"`
	Status   string      `json:"status"`
	Passed   bool        `json:"passed"`
	Message  string      `json:"message,omitempty"`
	Refused  []string    `json:"refused,omitempty"`
	Duration float64     `json:"duration"`
	Steps    []jsonStep  `json:"steps"`
	Verify   *jsonVerify `json:"verification,omitempty"`
}

type jsonStep struct {
	Number   int      `json:"number"`
	Test     string   `json:"test"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Points   int      `json:"points"`
	Message  string   `json:"message,omitempty"`
	Output   []string `json:"output,omitempty"`
	Duration float64  `json:"duration"`
}

type jsonVerify struct {
	Runs     int     `json:"runs"`
	Failed   int     `json:"failed"`
	Race     bool    `json:"race"`
	Message  string  `json:"message,omitempty"`
	Duration float64 `json:"duration"`
}

func jsonReport(out *labOutcome) jsonLab {
	lab, r := out.Lab, out.Report
	j := jsonLab{Lab: lab.ID, Title: lab.Title, Status: out.Status(), Passed: out.Passed(), Message: out.Message(), Steps: []jsonStep{}}
	if out.Refused != nil {
		for _, ref := range out.Refused.Refusals {
			j.Refused = append(j.Refused, ref.String())
		}
	}
	for _, s := range outcomeSteps(out) {
		js := jsonStep{Number: s.Number, Test: s.Test, Title: s.Title, Status: string(s.Status), Points: s.Points, Message: s.Message, Duration: s.Elapsed.Seconds()}
		if s.Status == grade.Fail {
			js.Output = s.Output
		}
		j.Steps = append(j.Steps, js)
	}
	if r == nil {
		return j
	}
	j.Duration = r.Elapsed.Seconds()
	if v := r.Verify; v != nil {
		j.Verify = &jsonVerify{Runs: v.Runs, Failed: v.Failed, Race: v.Race, Message: v.Message, Duration: v.Elapsed.Seconds()}
		j.Duration += v.Elapsed.Seconds()
	}
	return j
}
