package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// TestStepLoggedWhenItBegins: in step mode a step is pending while the
// script waits for Step (PendingStep names it, AtStep says so) and its
// event is recorded only when it begins, after what happened before it:
// the history said "step 1" at 0.002 s while the step ran 4 s later.
func TestStepLoggedWhenItBegins(t *testing.T) {
	srv, _ := etcds(t)
	sc := &Scenario{Name: "steps", Title: "steps", DefaultReplicas: 1, MinReplicas: 1, MaxReplicas: 1, DefaultTTL: 1,
		Run: func(ctx context.Context, run *Run) (history.Verdict, error) {
			if err := run.Phase(ctx, "one"); err != nil {
				return history.Verdict{}, err
			}
			run.Note("in step one")
			if err := run.Phase(ctx, "two"); err != nil {
				return history.Verdict{}, err
			}
			run.Note("in step two")
			return history.Verdict{Showed: true}, nil
		}}
	run, err := Start(context.Background(), sc, history.Params{Step: true}, Env{Etcd: srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Stop()
	phases := func() []history.Event {
		var out []history.Event
		for _, e := range run.Events(0) {
			if e.Kind == history.Phase {
				out = append(out, e)
			}
		}
		return out
	}
	for i, step := range []string{"one", "two"} {
		if !WaitFor(context.Background(), 10*time.Second, run.AtStep) {
			t.Fatalf("the script never waited at step %q", step)
		}
		if got := run.PendingStep(); got != step {
			t.Fatalf("pending step %q, want %q", got, step)
		}
		if ps := phases(); len(ps) != i {
			t.Fatalf("waiting at step %q, the history already has %d steps: %+v", step, len(ps), ps)
		}
		time.Sleep(50 * time.Millisecond) // the learner reads
		stepped := time.Since(run.start)
		run.Step()
		if !WaitFor(context.Background(), 10*time.Second, func() bool { return len(phases()) == i+1 }) {
			t.Fatalf("step %q was never recorded", step)
		}
		if e := phases()[i]; e.Text != step || e.Step != i+1 || e.At < stepped {
			t.Errorf("step %q recorded as %+v, before Step at %s", step, e, stepped)
		}
	}
	if _, err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	evs := run.History().Events
	var texts []string
	for _, e := range evs {
		if e.Kind == history.Phase || e.Kind == history.Note {
			texts = append(texts, e.Text)
		}
	}
	if want := []string{"one", "in step one", "two", "in step two"}; len(texts) < 4 || texts[0] != want[0] || texts[1] != want[1] || texts[2] != want[2] || texts[3] != want[3] {
		t.Errorf("events in order %q, want %q", texts, want)
	}
}
