package grade

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The line a step's failure is summed up by is the failing assertion, not
// a line the test logged before it (lab 09 showed a t.Logf).
func TestStepMessageIsTheAssertionNotALog(t *testing.T) {
	r, err := Grade(context.Background(), fixture(t, "messages"), []StepSpec{{Test: "TestStep1_LogsThenFails"}, {Test: "TestStep2_FiveSubtests"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "messages_test.go:11: Double(2) = 3, want 4"
	if m := r.Steps[0].Message(); m != want {
		t.Errorf("step 1's message = %q, want %q (the t.Fatalf, not the t.Logf before it)", m, want)
	}
	if !strings.Contains(r.Message, want) {
		t.Errorf("the lab's message %q lacks %q", r.Message, want)
	}
	if f := r.Steps[0].Failure; len(f) == 0 || strings.TrimSpace(f[0]) != want {
		t.Errorf("step 1's failure starts %q, want the assertion first (the TUI shows the first lines)", f)
	}
}

// Every failing subtest is listed with its title and its first failing
// line (lab 05's grade printed one of five).
func TestEveryFailingSubtestIsListed(t *testing.T) {
	r, err := Grade(context.Background(), fixture(t, "messages"), []StepSpec{{Test: "TestStep1_LogsThenFails"}, {Test: "TestStep2_FiveSubtests"}})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Steps[1]
	if len(s.Summary) != 5 {
		t.Fatalf("step 2's summary = %q, want one line for each of the 5 failing subtests", s.Summary)
	}
	for i, line := range s.Summary {
		n := i + 1
		want := fmt.Sprintf("case %d: messages_test.go:20: Double(%d) = %d, want %d", n, n, 2*n-1, 2*n)
		if line != want {
			t.Errorf("summary line %d = %q, want %q", n, line, want)
		}
		if f := s.Failure; len(f) <= i || f[i] != want {
			t.Errorf("failure line %d = %q, want the summary first: %q", n, f, want)
		}
	}
	if m := s.Message(); m != s.Summary[0] {
		t.Errorf("step 2's message = %q, want the first subtest's line %q", m, s.Summary[0])
	}
}

// A race report names both accesses in the learner's code, one for each
// goroutine (lab 01's was named at the locked write only, twice over).
func TestRaceNamesBothAccesses(t *testing.T) {
	o := fixture(t, "storerace")
	r, err := Grade(context.Background(), o, []StepSpec{{Test: "TestStep1_ReadWhileWriting"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(context.Background(), o, r); err != nil {
		t.Fatal(err)
	}
	if r.Status != LabRacy {
		t.Fatalf("status %s (%q), want racy", r.Status, r.Message)
	}
	for _, want := range []string{"storerace.go:20", "storerace.go:31", "(*Store).lookup", "(*Store).put"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("race message %q lacks %q: it must name the read and the write, each where the learner's code does it", r.Message, want)
		}
	}
	if rep := r.Verify.RaceReport; len(rep) == 0 || !strings.Contains(strings.Join(rep, "\n"), "WARNING: DATA RACE") {
		t.Errorf("the verification keeps no race report: %q", rep)
	}
}
