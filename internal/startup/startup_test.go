package startup

import (
	"reflect"
	"testing"

	"github.com/ownership-election/playground/lessons"
)

// The copy read at start-up must be exactly what lessons.Load reads, with
// the experiment check applied, and a second call must get a copy of its
// own.
func TestCourseIsWhatLoadReads(t *testing.T) {
	names := []string{"only-this-one"} // the course names others: problems expected
	first, firstProbs := Course(names)
	src := Sources()
	src.Experiments = names
	want, wantProbs := lessons.Load(src)
	if len(wantProbs) == 0 {
		t.Fatal("expected problems for unknown experiments; the check did not run")
	}
	if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(firstProbs, wantProbs) {
		t.Fatalf("the course read at start-up differs from lessons.Load (%d vs %d problems)", len(firstProbs), len(wantProbs))
	}
	second, secondProbs := Course(names)
	if second == first {
		t.Fatal("second call returned the same *Course")
	}
	if !reflect.DeepEqual(second, want) || !reflect.DeepEqual(secondProbs, wantProbs) {
		t.Fatal("second call differs from lessons.Load")
	}
}
