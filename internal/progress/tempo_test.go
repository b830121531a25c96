package progress

import (
	"testing"
	"time"
)

// TestExperimentTempo: the chosen tempo reads back, "no pause" (0) too;
// a merge keeps the newer choice; a value that is no duration is none.
func TestExperimentTempo(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	p := New()
	if _, ok := p.Tempo(); ok {
		t.Fatal("a tempo before any choice")
	}
	p.SetExperimentTempo(0, t0)
	if d, ok := p.Tempo(); !ok || d != 0 {
		t.Fatalf("no pause read back as %v %v", d, ok)
	}
	o := New()
	o.SetExperimentTempo(8*time.Second, t0.Add(time.Minute))
	p.Merge(o)
	if d, _ := p.Tempo(); d != 8*time.Second {
		t.Fatalf("merge kept %v, want the newer 8s", d)
	}
	older := New()
	older.SetExperimentTempo(2*time.Second, t0)
	p.Merge(older)
	if d, _ := p.Tempo(); d != 8*time.Second {
		t.Fatalf("an older choice replaced the newer: %v", d)
	}
	p.ExperimentTempo = "soon"
	if _, ok := p.Tempo(); ok {
		t.Fatal("a tempo that is no duration was read")
	}
}
