package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The classroom workflow builds the grader from the course at a pinned tag
// in a folder of its own and grades only in the learner's checkout.
func TestClassroomWorkflowGradesWithThePinnedCourse(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs/classroom-autograding.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Env  map[string]string
		Jobs map[string]struct {
			Steps []struct {
				Name, Uses, Run  string
				With             map[string]string
				WorkingDirectory string `yaml:"working-directory"`
			}
		}
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(wf.Env["COURSE_REF"]) {
		t.Errorf("COURSE_REF = %q, want a pinned release tag", wf.Env["COURSE_REF"])
	}
	var course, build, grade bool
	for _, s := range wf.Jobs["grade"].Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/checkout") && s.With["repository"] != "":
			course = s.With["path"] == "course" && strings.Contains(s.With["ref"], "COURSE_REF")
		case strings.Contains(s.Run, "go build"):
			build = s.WorkingDirectory == "course" && strings.Contains(s.Run, "./cmd/playground")
		case strings.Contains(s.Run, " grade"):
			grade = s.WorkingDirectory == "submission" && strings.Contains(s.Run, "--junit") && !strings.Contains(s.Run, "go run")
		}
	}
	if !course || !build || !grade {
		t.Errorf("course checked out at the tag in course/: %v; grader built there: %v; graded in submission/ with the built grader: %v", course, build, grade)
	}
}
