package grade

import "github.com/ownership-election/playground/lessons"

// StepSpecs are lab's steps as Grade takes them (it maps test results
// onto them): each step's test and title, in the manifest's order. The
// grader reads the course's model; the course knows nothing of grading.
func StepSpecs(lab lessons.Lab) []StepSpec {
	out := make([]StepSpec, len(lab.Steps))
	for i, s := range lab.Steps {
		out[i] = StepSpec{Test: s.Test, Title: s.Title}
	}
	return out
}
