package cli

import (
	"errors"
	"strings"
	"testing"
)

// TestPickLabsByWhatTheLearnerSees: grade takes a lab's number in the
// course (3.1), its folder, the folder's number or its name, and an
// unknown one lists the choices with their numbers.
func TestPickLabsByWhatTheLearnerSees(t *testing.T) {
	c, _, err := loadCourse(&Env{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"3.1", "lab 3.1", "02_lock", "02", "2", "lock"} {
		labs, err := pickLabs(c, []string{name})
		if err != nil || len(labs) != 1 || labs[0].ID != "02_lock" {
			t.Errorf("grade %s: %v %v", name, labs, err)
		}
	}
	if labs, err := pickLabs(c, []string{"7.3"}); err != nil || labs[0].ID != "08_herd" {
		t.Errorf("grade 7.3: %v %v", labs, err)
	}
	_, err = pickLabs(c, []string{"3.2"})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "3.1 (02_lock)") || !strings.Contains(err.Error(), "7.3 (08_herd)") {
		t.Errorf("grade 3.2: %v, want the choices with their numbers", err)
	}
}
