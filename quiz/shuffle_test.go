package quiz

import (
	"fmt"
	"slices"
	"testing"
)

func isPermutation(p []int) bool {
	s := slices.Clone(p)
	slices.Sort(s)
	for i, x := range s {
		if i != x {
			return false
		}
	}
	return true
}

func TestShuffleDeterministic(t *testing.T) {
	q := &Question{ID: "q1", Kind: Single, Options: opts(true, false, false, false, false, false)}
	a, b := Shuffle(q, "ada"), Shuffle(q, "ada")
	if !slices.Equal(a, b) || !isPermutation(a) {
		t.Fatalf("two shuffles for one learner: %v %v", a, b)
	}
	// Other learners (and other questions) see other orders: among 20
	// learners at least 10 distinct orders of 6 options (720 possible).
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		seen[fmt.Sprint(Shuffle(q, fmt.Sprintf("learner-%d", i)))] = true
	}
	if len(seen) < 10 {
		t.Errorf("only %d distinct orders for 20 learners", len(seen))
	}
	q2 := *q
	q2.ID = "q2"
	if slices.Equal(Shuffle(&q2, "ada"), a) && slices.Equal(Shuffle(&q2, "bob"), Shuffle(q, "bob")) {
		t.Error("question id does not change the order")
	}
}

// A fixed expectation: the order must not drift between Go versions or
// refactors, or learners would see their options move.
func TestShuffleStable(t *testing.T) {
	q := &Question{ID: "zombie-write-rejected", Kind: Single, Options: opts(true, false, false, false)}
	got := Shuffle(q, "ada")
	want := []int{2, 1, 0, 3} // recorded from the first implementation
	if !slices.Equal(got, want) {
		t.Errorf("Shuffle = %v, want %v", got, want)
	}
}

func TestShufflePinned(t *testing.T) {
	o := opts(true, false, false, false, false)
	o[4].Pin = true // "none of the above" stays last
	o[1].Pin = true
	q := &Question{ID: "pinned", Kind: Single, Options: o}
	moved := false
	for i := 0; i < 50; i++ {
		p := Shuffle(q, fmt.Sprint(i))
		if !isPermutation(p) || p[4] != 4 || p[1] != 1 {
			t.Fatalf("learner %d: %v", i, p)
		}
		if p[0] != 0 || p[2] != 2 {
			moved = true
		}
	}
	if !moved {
		t.Error("unpinned options never moved")
	}
}

func TestShuffleOrderNeverNearTheAnswer(t *testing.T) {
	starts := map[string]bool{}
	for n := 2; n <= 7; n++ {
		q := &Question{ID: "ord", Kind: Order, Items: items(n)}
		for i := 0; i < 200; i++ {
			p := Shuffle(q, fmt.Sprint(i))
			if !isPermutation(p) || len(p) != n {
				t.Fatalf("n=%d learner %d: %v", n, i, p)
			}
			if slices.Equal(p, []int{0, 1, 2, 3, 4, 5, 6}[:n]) {
				t.Fatalf("n=%d learner %d: shown already in order", n, i)
			}
			// Submitted untouched, the shown order scores nothing.
			if res, err := Grade(q, Response{QuestionID: q.ID, Order: p}); err != nil || res.Score != 0 {
				t.Fatalf("n=%d learner %d: shown order %v scores %v (%v), want 0", n, i, p, res.Score, err)
			}
			if n == 5 {
				starts[fmt.Sprint(p)] = true
			}
		}
	}
	// Not one fixed start (such as the reverse) a learner could learn.
	if len(starts) < 20 {
		t.Errorf("200 learners saw only %d different starts of a 5-event question", len(starts))
	}
}

// TestShuffleAgainDiffers: every round of a retry shows the options in
// another order than the round before, keeps pins in place, and an order
// question still never starts near its answer.
func TestShuffleAgainDiffers(t *testing.T) {
	pinned := opts(true, false, false, false)
	pinned[3].Pin = true
	order := &Question{ID: "o", Kind: Order, Items: opts(false, false, false, false, false)}
	for _, q := range []*Question{
		{ID: "two", Kind: Single, Options: opts(true, false)},
		{ID: "six", Kind: Multi, Options: opts(true, false, true, false, false, false)},
		{ID: "pin", Kind: Single, Options: pinned},
		order,
	} {
		prev := Shuffle(q, "ada")
		for round := 1; round <= 20; round++ {
			got := ShuffleAgain(q, "ada", round, prev)
			if slices.Equal(got, prev) || !isPermutation(got) {
				t.Fatalf("%s round %d: %v after %v", q.ID, round, got, prev)
			}
			if q.ID == "pin" && got[3] != 3 {
				t.Fatalf("pinned option moved: %v", got)
			}
			if q.Kind == Order && orderedPairs(got) > (len(got)-1)/2 {
				t.Fatalf("order round %d starts near the answer: %v", round, got)
			}
			if !slices.Equal(got, ShuffleAgain(q, "ada", round, prev)) {
				t.Fatalf("%s round %d is not reproducible", q.ID, round)
			}
			prev = got
		}
	}
}
