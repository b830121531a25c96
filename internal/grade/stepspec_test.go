package grade

import (
	"slices"
	"testing"

	"github.com/ownership-election/playground/lessons"
)

// TestStepSpecsKeepTheManifestsOrder: each step's test and title, in the
// order lab.yaml lists them; hints stay with the course.
func TestStepSpecsKeepTheManifestsOrder(t *testing.T) {
	lab := lessons.Lab{Steps: []lessons.Step{
		{Test: "TestStep1_Acquire", Title: "Acquire", Hints: []string{"a hint"}},
		{Test: "TestStep2_Release", Title: "Release"},
	}}
	want := []StepSpec{{Test: "TestStep1_Acquire", Title: "Acquire"}, {Test: "TestStep2_Release", Title: "Release"}}
	if got := StepSpecs(lab); !slices.Equal(got, want) {
		t.Fatalf("StepSpecs = %+v, want %+v", got, want)
	}
	if got := StepSpecs(lessons.Lab{}); len(got) != 0 {
		t.Fatalf("a lab without steps has step specs %+v", got)
	}
}
