package cli

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/grade"
)

// stepPoints is what every step of a lab is worth.
const stepPoints = 1

// scoredStep is one step as the autograders' reports show it.
type scoredStep struct {
	Number    int
	Test      string
	Title     string
	Status    grade.Status
	Points    int // earned
	MaxPoints int
	Message   string
	Output    []string
	Elapsed   time.Duration
}

// outcomeSteps scores each step of a lab: a step earns its points when it
// passed and no verification run failed it. A lab that was refused or
// could not be graded earns nothing, and neither does any step of a lab
// whose verification failed in a way no one step explains.
func outcomeSteps(out *labOutcome) []scoredStep {
	var steps []scoredStep
	for i, s := range out.Lab.Steps {
		steps = append(steps, scoredStep{Number: i + 1, Test: s.Test, Title: s.Title, Status: grade.NotRun, MaxPoints: stepPoints, Message: out.Message()})
	}
	r := out.Report
	if r == nil || out.Refused != nil || out.NotGradable != "" {
		return steps
	}
	for i := range steps {
		if i >= len(r.Steps) {
			break
		}
		st := r.Steps[i]
		steps[i].Status, steps[i].Message, steps[i].Output, steps[i].Elapsed = st.Status, st.Message(), st.Failure, st.Elapsed
		if st.Status == grade.NotRun && steps[i].Message == "" {
			steps[i].Message = r.Message
		}
	}
	scoreVerification(steps, r)
	for i := range steps {
		if steps[i].Status == grade.Pass {
			steps[i].Points = stepPoints
		}
	}
	return steps
}

// scoreVerification fails the steps a verification failed.
func scoreVerification(steps []scoredStep, r *grade.Report) {
	v := r.Verify
	switch {
	case r.Status == grade.LabPassed || r.Status == grade.LabFailed:
		return
	case v == nil || v.Result == nil:
		// Every step passed once but the verification did not run.
		for i := range steps {
			steps[i].Status, steps[i].Message = grade.NotRun, "not verified: "+r.Message
		}
		return
	}
	blamed := false
	for i := range steps {
		if t := v.Result.Test(steps[i].Test); t != nil && t.Fails > 0 {
			steps[i].Status, steps[i].Message, steps[i].Output = grade.Fail, r.Message, t.Failure
			blamed = true
		}
	}
	if !blamed {
		for i := range steps {
			steps[i].Status, steps[i].Message = grade.Fail, r.Message
		}
	}
}

// JUnit XML, as classroom autograders read it: a suite per lab and a case
// per step, with its points as properties.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class      string          `xml:"classname,attr"`
	Name       string          `xml:"name,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Failure    *junitFailure   `xml:"failure,omitempty"`
	Error      *junitFailure   `xml:"error,omitempty"`
	Skipped    *junitSkipped   `xml:"skipped,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func writeJUnit(path string, outs []*labOutcome) error {
	var doc junitSuites
	for _, out := range outs {
		s := junitSuite{Name: out.Lab.ID}
		if out.Report != nil {
			s.Time = secs(out.Report.Elapsed)
		}
		for _, st := range outcomeSteps(out) {
			s.Cases = append(s.Cases, junitStep(out, st, &s))
		}
		s.Tests = len(s.Cases)
		doc.Suites = append(doc.Suites, s)
	}
	data, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("grade: encode JUnit XML: %w", err)
	}
	data = append([]byte(xml.Header), append(data, '\n')...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("grade: write JUnit XML: %w", err)
	}
	return nil
}

// junitStep is one step's case; a lab that was not gradable has errors,
// not failures, since nothing was learnt about the code.
func junitStep(out *labOutcome, st scoredStep, s *junitSuite) junitCase {
	c := junitCase{Class: out.Lab.ID, Name: fmt.Sprintf("step %d: %s (%s)", st.Number, st.Title, st.Test), Time: secs(st.Elapsed),
		Properties: []junitProperty{{Name: "points", Value: fmt.Sprint(st.Points)}, {Name: "max_points", Value: fmt.Sprint(st.MaxPoints)}}}
	switch {
	case out.NotGradable != "":
		c.Error = &junitFailure{Message: st.Message, Type: "not-gradable"}
		s.Errors++
	case st.Status == grade.Pass:
	case st.Status == grade.Skip:
		c.Skipped = &junitSkipped{Message: "skipped"}
		s.Skipped++
	default:
		c.Failure = &junitFailure{Message: st.Message, Type: out.Status(), Text: strings.Join(st.Output, "\n")}
		s.Failures++
	}
	return c
}

// Gradescope's results.json (its autograder specification: score and
// max_score per test, output, visibility).
type gsResults struct {
	Score      float64  `json:"score"`
	Output     string   `json:"output,omitempty"`
	Visibility string   `json:"visibility"`
	Stdout     string   `json:"stdout_visibility"`
	Tests      []gsTest `json:"tests"`
}

type gsTest struct {
	Name       string  `json:"name"`
	Number     string  `json:"number"`
	Score      float64 `json:"score"`
	MaxScore   float64 `json:"max_score"`
	Status     string  `json:"status"`
	Output     string  `json:"output,omitempty"`
	Visibility string  `json:"visibility"`
}

func writeGradescope(path string, outs []*labOutcome) error {
	res := gsResults{Visibility: "visible", Stdout: "hidden", Tests: []gsTest{}}
	var notes []string
	for _, out := range outs {
		if out.NotGradable != "" || out.Refused != nil {
			notes = append(notes, fmt.Sprintf("%s %s: %s", out.Lab.ID, strings.ToUpper(out.Status()), out.Message()))
		}
		for _, st := range outcomeSteps(out) {
			t := gsTest{Name: fmt.Sprintf("%s step %d: %s", out.Lab.ID, st.Number, st.Title), Number: fmt.Sprintf("%s.%d", out.Lab.ID[:2], st.Number),
				Score: float64(st.Points), MaxScore: float64(st.MaxPoints), Status: "failed", Visibility: "visible"}
			if st.Points == st.MaxPoints {
				t.Status = "passed"
			}
			t.Output = strings.TrimSpace(st.Message + "\n" + strings.Join(st.Output, "\n"))
			res.Score += t.Score
			res.Tests = append(res.Tests, t)
		}
	}
	res.Output = strings.Join(notes, "\n")
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("grade: encode Gradescope results: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("grade: write Gradescope results: %w", err)
	}
	return nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
