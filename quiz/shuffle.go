package quiz

import (
	"fmt"
	"hash/fnv"
	"slices"
)

// Shuffle returns the order in which to display a question's options (or,
// for order questions, its items) to a given learner: element i is the
// index of the option shown in position i. The order depends only on the
// learner's name and the question id, so it is the same at every visit and
// differs between learners; the position of the right answer carries no
// signal. Pinned options keep their own position. An order question with
// two or more items is never shown near its answer: at most half of its
// neighbouring events stand the right way round, so submitting the shown
// order untouched scores nothing.
func Shuffle(q *Question, learner string) []int {
	return shuffleSeed(q, learner+"\x00"+q.ID)
}

// ShuffleAgain is the order for another round of the same question
// (round 1, 2, ... of a retry or a review), shown to a learner who has
// just seen prev: it is shuffled afresh, so the answer cannot be found by
// its place, and differs from prev whenever the question has two or more
// options free to move (for an order question, two or more items). It
// obeys Shuffle's rules (pins stay, an order question never starts near
// its answer), and depends only on the learner, the question and round.
func ShuffleAgain(q *Question, learner string, round int, prev []int) []int {
	seed := fmt.Sprintf("%s\x00%s\x00round %d", learner, q.ID, round)
	out := shuffleSeed(q, seed)
	for try := 1; slices.Equal(out, prev) && try < 64; try++ {
		out = shuffleSeed(q, fmt.Sprintf("%s\x00%d", seed, try))
	}
	return out
}

// shuffleSeed is Shuffle's order drawn from seed.
func shuffleSeed(q *Question, seed string) []int {
	opts := q.Options
	if q.Kind == Order {
		opts = q.Items
	}
	n := len(opts)
	out := make([]int, n)
	var free []int // positions of unpinned options
	for i := range out {
		out[i] = i
		if !opts[i].Pin {
			free = append(free, i)
		}
	}
	rng := newRand(seed)
	// Fisher-Yates over the free slots only; pinned ones stay put.
	shuffle := func() {
		for k := len(free) - 1; k > 0; k-- {
			j := int(rng.next() % uint64(k+1))
			out[free[k]], out[free[j]] = out[free[j]], out[free[k]]
		}
	}
	shuffle()
	if q.Kind == Order && n >= 2 {
		// Never start near the answer: at most half the neighbouring
		// events may already stand the right way round, so the shown
		// order scores nothing (Grade gives credit above chance only).
		// About half of all orders qualify; the reverse always does.
		for tries := 0; orderedPairs(out) > (n-1)/2; tries++ {
			if tries == 64 {
				for i := range out {
					out[i] = n - 1 - i
				}
				break
			}
			shuffle()
		}
	}
	return out
}

// orderedPairs counts the neighbours k, k+1 of the correct order that the
// display order p (element i: the item shown at position i) puts k first.
func orderedPairs(p []int) int {
	pos := make([]int, len(p))
	for at, item := range p {
		pos[item] = at
	}
	pairs := 0
	for k := 0; k+1 < len(p); k++ {
		if pos[k] < pos[k+1] {
			pairs++
		}
	}
	return pairs
}

// splitmix64 is written out here, rather than taken from math/rand, so
// that a learner's option order never changes with the Go version.
type splitmix struct{ s uint64 }

func newRand(seed string) *splitmix {
	h := fnv.New64a()
	h.Write([]byte(seed))
	return &splitmix{s: h.Sum64()}
}

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
