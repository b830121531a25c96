package labrun

import "time"

// status is what one step did in the last grade.
type status int

const (
	statusNotRun status = iota
	statusPass
	statusFail
	statusSkip
)

// stepResult is a manifest step joined with its outcome in the last grade.
type stepResult struct {
	Test    string
	Title   string
	Hints   []string
	Status  status
	Message []string // the failure's output lines, as the test printed them
	Elapsed time.Duration
}

// report is what the screen draws after a grade: internal/grade's result
// mapped onto the lab's steps.
type report struct {
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
		if s.Status == statusPass {
			n++
		}
	}
	return n
}

// allPassed is true only for a complete, clean run where every step passed.
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
		if s.Status == statusFail {
			return i
		}
	}
	if len(r.BuildErrors) > 0 || r.TimedOut {
		for i, s := range r.Steps {
			if s.Status != statusPass {
				return i
			}
		}
	}
	return -1
}
