package lab

import (
	"time"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/lessons"
)

// stepResult is a manifest step's outcome in the last grade (NotRun
// before any): internal/grade's step, with the step's hints from the
// manifest.
type stepResult struct {
	grade.Step
	Hints []string
}

// newStep is a manifest step before any grade.
func newStep(s lessons.Step) stepResult {
	return stepResult{Step: grade.Step{Test: s.Test, Title: s.Title, Status: grade.NotRun}, Hints: s.Hints}
}

// report is what the screen draws after a grade: internal/grade's Report
// with the manifest's hints joined to its steps.
type report struct {
	// Lab is internal/grade's report: its Status says whether the pass
	// is verified (grade.LabPassed), still being verified
	// (grade.LabUnverified), or was found racy or flaky, with Message.
	Lab         *grade.Report
	Steps       []stepResult
	BuildErrors []string // compiler messages, each starting with file:line
	RunPassed   bool     // go test itself said ok
	Message     string   // internal/grade's summary when the run went wrong as a whole
	TimedOut    bool
	Canceled    bool
	Err         error // the grade could not run at all (no go tool, ...)
	Elapsed     time.Duration
}

func (r *report) passedCount() int {
	n := 0
	for _, s := range r.Steps {
		if s.Status == grade.Pass {
			n++
		}
	}
	return n
}

// passConfirmed reports whether step i may be shown as passed: it passed,
// and no run under the race detector is still owed (grade.Report's
// PassConfirmed). A pass of the first run alone is not shown as one.
func (r *report) passConfirmed(i int) bool {
	if r == nil || i < 0 || i >= len(r.Steps) || r.Steps[i].Status != grade.Pass {
		return false
	}
	if r.Lab == nil {
		return !r.allPassed()
	}
	return grade.PassesConfirmed(r.Lab.Status)
}

// verified reports whether the verification confirmed the pass.
func (r *report) verified() bool { return r != nil && r.Lab != nil && r.Lab.Status == grade.LabPassed }

// verifying reports whether the pass still waits for its verification.
func (r *report) verifying() bool {
	return r != nil && r.Lab != nil && r.Lab.Status == grade.LabUnverified && r.allPassed()
}

// unsound reports whether the verification found the pass racy or flaky.
func (r *report) unsound() bool {
	return r != nil && r.Lab != nil && (r.Lab.Status == grade.LabRacy || r.Lab.Status == grade.LabFlaky)
}

// allPassed is true only for a complete, clean run where every step passed
// (the fast run: see verified for whether the pass holds up).
func (r *report) allPassed() bool {
	if r == nil || !r.RunPassed || r.Err != nil || r.TimedOut || r.Canceled || len(r.BuildErrors) > 0 || len(r.Steps) == 0 {
		return false
	}
	return r.passedCount() == len(r.Steps)
}

// firstFailing returns the index of the first step that failed, or of the
// first that did not run when the run broke off (build error, timeout), or
// -1 when nothing is wrong.
func (r *report) firstFailing() int {
	if r == nil {
		return -1
	}
	for i, s := range r.Steps {
		if s.Status == grade.Fail {
			return i
		}
	}
	if len(r.BuildErrors) > 0 || r.TimedOut {
		for i, s := range r.Steps {
			if s.Status != grade.Pass {
				return i
			}
		}
	}
	return -1
}
