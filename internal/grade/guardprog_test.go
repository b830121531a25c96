package grade

import (
	"strings"
	"testing"
)

// A guard program that cannot be built stops the grading with a message
// that says what is missing, never a grading without it.
func TestGuardThatCannotBeBuiltIsAnError(t *testing.T) {
	t.Setenv(CacheDirEnv, t.TempDir())
	_, err := guardProgram("/nonexistent/go")
	if err == nil || !strings.Contains(err.Error(), "could not build the grading's guard program") {
		t.Fatalf("err = %v, want the guard's build failure", err)
	}
	o := Options{Dir: t.TempDir(), Pkg: "./x", GoCmd: "/nonexistent/go", Seal: true}
	if _, err := Run(t.Context(), o); err == nil || !strings.Contains(err.Error(), "guard program") {
		t.Fatalf("Run: err = %v, want the guard's build failure", err)
	}
}
