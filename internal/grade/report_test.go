package grade

import (
	"context"
	"strings"
	"testing"
)

func TestGradeAndVerifyPass(t *testing.T) {
	o := fixture(t, "mixed")
	o.Overlay = map[string]string{"labs/mixed/mixed.go": "solutions/mixed/mixed.go"}
	o.Run = "TestStep[12]"
	steps := []StepSpec{{Test: "TestStep1_Passes", Title: "Pass"}, {Test: "TestStep2_Doubles", Title: "Double"}}
	r, err := Grade(context.Background(), o, steps)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != LabUnverified || r.Passed() || r.StepsPassed() != 2 {
		t.Fatalf("first run: status %s, passed %v, %d steps passed; want unverified, not yet passed, 2", r.Status, r.Passed(), r.StepsPassed())
	}
	if r.PassConfirmed(0) || r.PassConfirmed(1) {
		t.Fatal("a step's pass counts as confirmed before the runs under the race detector")
	}
	if err := Verify(context.Background(), o, r); err != nil {
		t.Fatal(err)
	}
	if r.Status != LabPassed || !r.Passed() || r.Verify == nil || r.Verify.Failed != 0 || r.Message != "" {
		t.Fatalf("after verification: status %s, message %q, verify %+v", r.Status, r.Message, r.Verify)
	}
	if !r.PassConfirmed(0) || !r.PassConfirmed(1) {
		t.Fatal("after a verified pass, a step's pass is not confirmed")
	}
	if tt := r.Verify.Result.Test("TestStep2_Doubles"); tt == nil || tt.Runs != VerifyCount {
		t.Errorf("verification ran step 2 %v times, want %d", tt, VerifyCount)
	}
}

func TestGradeFailingLab(t *testing.T) {
	o := fixture(t, "mixed")
	r, err := Grade(context.Background(), o, []StepSpec{{Test: "TestStep1_Passes"}, {Test: "TestStep2_Doubles"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != LabFailed || !strings.Contains(r.Message, "step 2 (TestStep2_Doubles) failed: ") || !strings.Contains(r.Message, "Double(2) = 0") {
		t.Fatalf("status %s message %q, want a failure naming step 2 and its message", r.Status, r.Message)
	}
	if r.Steps[1].Message() == "" || r.Steps[0].Message() != "" {
		t.Errorf("step messages %q, %q", r.Steps[0].Message(), r.Steps[1].Message())
	}
	// Verify leaves a failed lab alone.
	if err := Verify(context.Background(), o, r); err != nil || r.Status != LabFailed || r.Verify != nil {
		t.Errorf("Verify of a failed lab: %v, %s, %+v", err, r.Status, r.Verify)
	}
}

// A data race that the fast run does not notice is caught by the
// verification and reported as such, with where it happens.
func TestVerifyRacy(t *testing.T) {
	o := fixture(t, "racy")
	r, err := Grade(context.Background(), o, []StepSpec{{Test: "TestStep1_Counts"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != LabUnverified {
		t.Fatalf("first run: %s %q, want unverified", r.Status, r.Message)
	}
	if err := Verify(context.Background(), o, r); err != nil {
		t.Fatal(err)
	}
	if r.Status != LabRacy || r.Passed() {
		t.Fatalf("status %s, want racy", r.Status)
	}
	if r.Steps[0].Status != Fail || r.PassConfirmed(0) || r.StepsPassed() != 0 {
		t.Fatalf("step 1 is %s after the race detector failed it, want a failure", r.Steps[0].Status)
	}
	if !strings.HasPrefix(r.Message, "failed ") || !strings.Contains(r.Message, " of 5 runs under -race: a data race in step 1") || !strings.Contains(r.Message, "racy.go:") {
		t.Errorf("message %q", r.Message)
	}
}

func TestVerifyFlaky(t *testing.T) {
	o := fixture(t, "flaky")
	r, err := Grade(context.Background(), o, []StepSpec{{Test: "TestStep1_Sometimes"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(context.Background(), o, r); err != nil {
		t.Fatal(err)
	}
	want := "failed 1 of 5 runs under -race: step 1 (TestStep1_Sometimes): flaky_test.go:11: the third run lost its lock to a competitor"
	if r.Status != LabFlaky || r.Message != want {
		t.Fatalf("status %s message %q, want flaky with %q", r.Status, r.Message, want)
	}
}

// The runtime's "fatal error: concurrent map writes" is a data race in
// the learner's code: under verification the lab is racy (not flaky), and
// in the first run the step fails with a message that says it is a race
// on a map and where.
func TestConcurrentMapWritesIsARace(t *testing.T) {
	steps := []StepSpec{{Test: "TestStep1_Fine"}, {Test: "TestStep2_Puts"}}
	o := fixture(t, "maprace")
	r, err := Grade(context.Background(), o, steps)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(context.Background(), o, r); err != nil {
		t.Fatal(err)
	}
	if r.Status != LabRacy || !r.Verify.Race {
		t.Fatalf("verification: status %s message %q, want racy", r.Status, r.Message)
	}
	if !r.PassConfirmed(0) || r.Steps[1].Status != Fail || r.PassConfirmed(1) {
		t.Fatalf("after the race in step 2: step 1 %s (confirmed %v), step 2 %s; want step 1 passed under -race and step 2 failed", r.Steps[0].Status, r.PassConfirmed(0), r.Steps[1].Status)
	}
	if m := r.Steps[1].Message(); m == "" {
		t.Error("step 2 failed the verification but says nothing")
	}
	for _, want := range []string{"runs under -race: step 2 (TestStep2_Puts): a data race on a map", `"fatal error: concurrent map writes"`, "maprace.go:"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("verification message %q lacks %q", r.Message, want)
		}
	}

	o = fixture(t, "maprace")
	o.Env = append(o.Env, "MAPRACE_PLAIN=1")
	r, err = Grade(context.Background(), o, steps)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != LabFailed || r.Steps[1].Status != Fail {
		t.Fatalf("first run: status %s, step 2 %s, want a failed step 2", r.Status, r.Steps[1].Status)
	}
	for _, want := range []string{"step 2 (TestStep2_Puts) crashed: a data race on a map", "maprace.go:"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("first-run message %q lacks %q", r.Message, want)
		}
	}
	if m := r.Steps[1].Message(); !strings.HasPrefix(m, "a data race on a map") {
		t.Errorf("step 2's message %q, want the race first", m)
	}
}
