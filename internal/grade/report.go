package grade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// VerifyCount is how many times verification runs a lab's tests under the
// race detector before a pass counts.
const VerifyCount = 5

// StepSpec is one step of a lab as its manifest names it.
type StepSpec struct {
	Test  string
	Title string
}

// LabStatus is where a lab stands after grading and verification.
type LabStatus string

// The statuses of a lab. Only LabPassed counts as passed: a first run
// where every step passed is LabUnverified until the verification
// (VerifyCount runs under the race detector) agrees.
const (
	LabFailed     LabStatus = "fail"       // a step failed or did not run, or the run broke off
	LabUnverified LabStatus = "unverified" // every step passed once; verification pending
	LabPassed     LabStatus = "pass"       // every step passed, and again under -race every time
	LabRacy       LabStatus = "racy"       // passed once, but the race detector found a data race
	LabFlaky      LabStatus = "flaky"      // passed once, but failed on a repeat
	LabError      LabStatus = "error"      // the grading could not run (no go command, ...)
	LabCanceled   LabStatus = "canceled"   // stopped before it ended
)

// Step is one manifest step with its outcome: the first run's, except
// that a step the verification found failing (racy or flaky) is a
// failure, with what it printed there. A Pass in a report that is not
// LabPassed (or LabFailed, which never ran the race detector) is only
// the first run's: say so rather than show it as a pass.
type Step struct {
	Test    string
	Title   string
	Status  Status
	Failure []string // what the test printed when it failed
	// Summary is a line for each failing subtest (its title and first
	// failing line), or the step's first failing line: what to list
	// under the step. Failure starts with it when it differs.
	Summary []string
	Elapsed time.Duration
}

// Message is the first line of the step's failure worth showing, "" for
// a step that did not fail.
func (s Step) Message() string {
	if s.Status == Pass || s.Status == Skip {
		return ""
	}
	return firstMessage(s.Failure)
}

// Verification is the outcome of re-running a passing lab.
type Verification struct {
	Runs    int // repeats
	Failed  int // repeats in which some step failed
	Race    bool
	Message string // why it failed, "" when it did not
	// RaceReport is the race detector's whole first report (learner
	// frames marked), when it found a race.
	RaceReport []string
	Elapsed    time.Duration
	Result     *Result
}

// Report is a lab's grade: the first, fast run mapped onto the manifest's
// steps, and once it passed, its verification. It is what the TUI and
// `playground grade` show.
type Report struct {
	Lab     string
	Steps   []Step
	Status  LabStatus
	Message string // a one-line summary of what went wrong, "" on a pass
	Elapsed time.Duration
	// Result is the first run as internal/grade parsed it (compile
	// errors, the package's output); nil when it could not run.
	Result *Result
	// Verify is set once verification ran.
	Verify *Verification
	// Err is why the grading could not run, when Status is LabError.
	Err error
}

// Passed reports whether the lab passed and was verified.
func (r *Report) Passed() bool { return r != nil && r.Status == LabPassed }

// StepsPassed counts the steps that passed (in the first run, and in the
// verification when it ran).
func (r *Report) StepsPassed() int {
	n := 0
	for _, s := range r.Steps {
		if s.Status == Pass {
			n++
		}
	}
	return n
}

// Grade runs a lab's tests once, quickly (no race detector), and maps the
// result onto steps. A lab whose every step passed is LabUnverified: call
// Verify next. The error is the grading's own failure (also in Report.Err)
// or ctx's.
func Grade(ctx context.Context, o Options, steps []StepSpec) (*Report, error) {
	o.Race, o.Count = false, 1
	r := &Report{Lab: o.name()}
	res, err := Run(ctx, o)
	r.fill(steps, res, err)
	return r, err
}

func (r *Report) fill(steps []StepSpec, res *Result, err error) {
	r.Result = res
	tests := make([]string, len(steps))
	for i, s := range steps {
		tests[i] = s.Test
		r.Steps = append(r.Steps, Step{Test: s.Test, Title: s.Title, Status: NotRun})
	}
	switch {
	case err != nil && isCanceled(err):
		r.Status = LabCanceled
		r.Message = "grading was stopped"
		return
	case err != nil:
		r.Status, r.Err, r.Message = LabError, err, err.Error()
		return
	case res == nil:
		r.Status, r.Message = LabError, "no result"
		return
	}
	r.Elapsed = res.Elapsed
	for i, s := range res.Steps(tests) {
		r.Steps[i].Status = s.Status
		r.Steps[i].Failure = s.Failure
		r.Steps[i].Summary = s.Summary
		r.Steps[i].Elapsed = s.Elapsed
	}
	all := len(steps) > 0
	for _, s := range r.Steps {
		if s.Status != Pass {
			all = false
		}
	}
	if res.Passed && all {
		r.Status = LabUnverified
		return
	}
	r.Status = LabFailed
	r.Message = res.Message
	if r.Message == "" {
		for _, s := range r.Steps {
			if s.Status != Pass {
				r.Message = fmt.Sprintf("%s %s", StepName(s.Test), failedWord(s.Status))
				if m := s.Message(); m != "" {
					r.Message += ": " + m
				}
				break
			}
		}
	}
	if r.Message == "" {
		r.Message = "the run failed outside the steps: " + firstNonEmpty(append(res.Output, res.Stderr...))
	}
}

func failedWord(s Status) string {
	switch s {
	case Fail:
		return "failed"
	case Skip:
		return "was skipped"
	default:
		return "did not run"
	}
}

// Verify runs a LabUnverified lab's tests VerifyCount times under the race
// detector and settles its status: LabPassed, LabRacy or LabFlaky, with
// the failing run's message ("failed 2 of 5 runs under -race: ..."). A
// report in any other status is left alone.
func Verify(ctx context.Context, o Options, r *Report) error {
	if r == nil || r.Status != LabUnverified {
		return nil
	}
	o.Race, o.Count = true, VerifyCount
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	// Five repeats under the race detector take longer than one plain run.
	o.Timeout *= 2
	res, err := Run(ctx, o)
	if err != nil {
		if isCanceled(err) {
			return err
		}
		r.Status, r.Err, r.Message = LabError, err, "verification could not run: "+err.Error()
		return err
	}
	v := &Verification{Runs: VerifyCount, Result: res, Elapsed: res.Elapsed}
	r.Verify = v
	tests := make([]string, len(r.Steps))
	for i, s := range r.Steps {
		tests[i] = s.Test
	}
	var first *Test
	for _, name := range tests {
		t := res.Test(name)
		if t == nil {
			continue
		}
		v.Failed = max(v.Failed, t.Fails)
		if t.Fails > 0 && first == nil {
			first = t
		}
	}
	// The runtime's check on maps can stop a racy run before the race
	// detector reports: that is a race too, not flakiness.
	v.Race = res.anyLine("WARNING: DATA RACE", "race detected during execution of test", "fatal error: concurrent map ")
	switch {
	case res.Passed && v.Failed == 0:
		r.Status = LabPassed
		return nil
	case v.Race:
		r.Status = LabRacy
	default:
		r.Status = LabFlaky
	}
	if v.Failed == 0 {
		// Not one step failed, yet the run did not pass (a timeout, a
		// crash, a race outside a test): count it as one failed run.
		v.Failed = 1
	}
	detail := res.Message
	switch {
	case v.Race:
		detail = raceSummary(res)
		v.RaceReport = raceReport(res.allLines())
	case first != nil:
		detail = StepName(first.Name) + ": " + firstMessage(first.Failure)
	case detail == "":
		detail = firstNonEmpty(append(res.Output, res.Stderr...))
	}
	v.Message = fmt.Sprintf("failed %d of %d runs under -race: %s", v.Failed, VerifyCount, detail)
	r.Message = v.Message
	r.blameSteps(res, v.Message)
	return nil
}

// blameSteps marks the steps that failed a run of the verification as
// failed, with what they printed there, so that no step keeps a pass the
// race-checked runs took back. When no step failed (a race or a crash
// outside every test), every step is failed with msg.
func (r *Report) blameSteps(res *Result, msg string) {
	blamed := false
	for i := range r.Steps {
		if t := res.Test(r.Steps[i].Test); t != nil && t.Fails > 0 {
			s := &r.Steps[i]
			s.Status, s.Failure, s.Summary = Fail, t.Failure, t.Summary
			blamed = true
		}
	}
	if blamed {
		return
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		s.Status, s.Failure, s.Summary = Fail, []string{msg}, nil
	}
}

// PassConfirmed reports whether step i's pass may be shown as a pass: it
// passed, and PassesConfirmed.
func (r *Report) PassConfirmed(i int) bool {
	return r != nil && i >= 0 && i < len(r.Steps) && r.Steps[i].Status == Pass && PassesConfirmed(r.Status)
}

// PassesConfirmed reports whether, in a report of status s, a step that
// passed may be shown as passed: the lab is verified; or the runs under
// the race detector ended (racy or flaky) and blamed other steps; or it
// failed in the first run, so no verification was owed (its passing
// steps pass as go test says). Before the verification has ended
// (unverified, or it was stopped or could not run), a pass is the first
// run's only, and is not to be shown as a pass.
func PassesConfirmed(s LabStatus) bool {
	switch s {
	case LabPassed, LabFailed, LabRacy, LabFlaky:
		return true
	}
	return false
}

// firstMessage is the first line of a failure worth a summary: the test's
// own message rather than a blank or a subtest's verdict line.
func firstMessage(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "=== ") {
			continue
		}
		return t
	}
	return ""
}

func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
