package review

import (
	"slices"
	"testing"
	"time"
)

// clock is the test's injected clock: it moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }
func answer(c Card, had, right bool, now time.Time) Card {
	out, _ := Default().Answer(c, had, right, now)
	return out
}

// TestWalkUpTheBoxes answers one missed question right each time it is
// due and checks it waits 10 min, then 1, 3, 7 and 21 days, then retires.
func TestWalkUpTheBoxes(t *testing.T) {
	clk := newClock()
	card, ok := Default().Answer(Card{}, false, false, clk.now())
	if !ok || card.Box != 0 || !card.Due.Equal(clk.now().Add(10*time.Minute)) {
		t.Fatalf("a miss: %+v %v, want box 0 due in 10 min", card, ok)
	}
	for box, wait := range Intervals {
		if card.IsDue(clk.now().Add(wait - time.Second)) {
			t.Fatalf("box %d: due a second before its %v", box, wait)
		}
		clk.advance(wait)
		if !card.IsDue(clk.now()) {
			t.Fatalf("box %d: not due after %v", box, wait)
		}
		card = answer(card, true, true, clk.now())
		if box+1 < len(Intervals) {
			if card.Box != box+1 || !card.Due.Equal(clk.now().Add(Intervals[box+1])) {
				t.Fatalf("after box %d: %+v, want box %d due in %v", box, card, box+1, Intervals[box+1])
			}
		}
	}
	if !card.Retired || card.IsDue(clk.now().Add(365*24*time.Hour)) {
		t.Errorf("right in the last box: %+v, want retired and never due", card)
	}
}

// TestMissGoesBackToFirstBox: a miss from any box, retired included,
// starts the 10 minutes again.
func TestMissGoesBackToFirstBox(t *testing.T) {
	clk := newClock()
	for _, c := range []Card{{Box: 3, Due: clk.now()}, {Box: 4, Retired: true}} {
		got := answer(c, true, false, clk.now())
		if got.Box != 0 || got.Retired || !got.Due.Equal(clk.now().Add(10*time.Minute)) || !got.Seen.Equal(clk.now()) {
			t.Errorf("miss from %+v: %+v", c, got)
		}
	}
}

// TestRightBeforeDueWaits: a retry right after a miss does not move the
// question up; only an answer once it is due does.
func TestRightBeforeDueWaits(t *testing.T) {
	clk := newClock()
	card := answer(Card{}, false, false, clk.now())
	clk.advance(time.Minute)
	if got := answer(card, true, true, clk.now()); got != card {
		t.Errorf("right before due: %+v, want unchanged %+v", got, card)
	}
}

// TestRightOutsideReviewAddsNothing: questions answered right and never
// missed do not enter the schedule.
func TestRightOutsideReviewAddsNothing(t *testing.T) {
	if _, ok := Default().Answer(Card{}, false, true, newClock().now()); ok {
		t.Error("a right answer to a question not in review added a card")
	}
}

func TestDueAndNext(t *testing.T) {
	clk := newClock()
	cards := map[string]Card{
		"b": {Due: clk.now().Add(-time.Hour)},
		"a": {Due: clk.now().Add(-time.Hour)},
		"c": {Due: clk.now().Add(-2 * time.Hour)},
		"d": {Due: clk.now().Add(time.Hour)},
		"e": {Due: clk.now().Add(30 * time.Minute)},
		"f": {Due: clk.now().Add(-time.Hour), Retired: true},
	}
	if got := Due(cards, clk.now()); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Errorf("Due = %v, want the longest overdue first: c a b", got)
	}
	next, ok := Next(cards, clk.now())
	if !ok || !next.Equal(clk.now().Add(30*time.Minute)) {
		t.Errorf("Next = %v %v, want in 30 min", next, ok)
	}
	clk.advance(2 * time.Hour)
	if got := Due(cards, clk.now()); len(got) != 5 {
		t.Errorf("two hours on, Due = %v, want all five not retired", got)
	}
	if _, ok := Next(cards, clk.now()); ok {
		t.Error("Next found a card with everything due")
	}
}

func TestClampAndNewer(t *testing.T) {
	s := Default()
	if c := s.Clamp(Card{Box: 9}); c.Box != len(Intervals)-1 {
		t.Errorf("box 9 clamped to %d", c.Box)
	}
	if c := s.Clamp(Card{Box: -2}); c.Box != 0 {
		t.Errorf("box -2 clamped to %d", c.Box)
	}
	t0 := newClock().now()
	if !Newer(Card{Seen: t0.Add(time.Second)}, Card{Seen: t0}) || Newer(Card{Seen: t0}, Card{Seen: t0}) {
		t.Error("Newer does not prefer the card seen last")
	}
}
