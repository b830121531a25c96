package grade

import "time"

// StepResult is one manifest step's outcome.
type StepResult struct {
	Test    string
	Status  Status
	Failure []string
	Summary []string // see Test.Summary
	Elapsed time.Duration
}

// Steps maps a result onto a lab's steps, given each step's test name in
// manifest order (lessons.Lab's Steps[i].Test). A step whose test did not
// run (compile error, -run filter, crash before it) is NotRun.
func (r *Result) Steps(tests []string) []StepResult {
	out := make([]StepResult, len(tests))
	for i, name := range tests {
		out[i] = StepResult{Test: name, Status: NotRun}
		if t := r.Test(name); t != nil {
			out[i].Status = t.Status
			out[i].Failure = t.Failure
			out[i].Summary = t.Summary
			out[i].Elapsed = t.Elapsed
		}
	}
	return out
}

// StepsPassed counts the steps that passed.
func StepsPassed(steps []StepResult) int {
	n := 0
	for _, s := range steps {
		if s.Status == Pass {
			n++
		}
	}
	return n
}
