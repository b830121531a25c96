package lessons

import (
	"slices"
	"testing"
)

func labCourse() *Course {
	return &Course{
		Lessons: []*Lesson{
			{Number: 2, ID: "cas", Labs: []string{"01_cas"}},
			{Number: 5, ID: "fencing", Labs: []string{"04_fencing", "06_fenced_write"}},
		},
		Labs: []*Lab{{ID: "01_cas"}, {ID: "04_fencing"}, {ID: "06_fenced_write"}, {ID: "10_spare"}},
	}
}

func TestLabNumbersFollowTheLessons(t *testing.T) {
	c := labCourse()
	for id, want := range map[string]string{"01_cas": "lab 2.1", "04_fencing": "lab 5.1", "06_fenced_write": "lab 5.2", "10_spare": "lab 10_spare"} {
		if got := c.LabName(id); got != want {
			t.Errorf("LabName(%s) = %q, want %q", id, got, want)
		}
	}
}

func TestFindLabByWhatTheLearnerSees(t *testing.T) {
	c := labCourse()
	for name, want := range map[string]string{
		"5.2": "06_fenced_write", "lab 5.2": "06_fenced_write", "06_fenced_write": "06_fenced_write",
		"06": "06_fenced_write", "6": "06_fenced_write", "fenced": "", "cas": "01_cas", "2.1": "01_cas",
		"1": "01_cas", "5.3": "", "": "", "10": "10_spare",
	} {
		got := ""
		if l := c.FindLab(name); l != nil {
			got = l.ID
		}
		if got != want {
			t.Errorf("FindLab(%q) = %q, want %q", name, got, want)
		}
	}
	want := []string{"2.1 (01_cas)", "5.1 (04_fencing)", "5.2 (06_fenced_write)", "10_spare"}
	if got := c.LabChoices(); !slices.Equal(got, want) {
		t.Errorf("LabChoices = %v, want %v", got, want)
	}
}
