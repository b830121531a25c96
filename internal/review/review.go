// Package review schedules missed questions for spaced review with a
// Leitner-box schedule: a question missed goes to the first box and comes
// back after a short interval; each right answer once it is due moves it
// up one box, to a longer interval; a miss sends it back to the first box;
// a right answer in the last box retires it. It knows no UI and no files:
// the caller passes the time, so tests run on any clock they like.
package review

import (
	"cmp"
	"slices"
	"time"
)

// Intervals is the default schedule: how long a question waits in each
// box before it is due again (10 minutes, then 1, 3, 7 and 21 days).
// Expanding intervals beat fixed ones by nothing measurable; spacing at
// all is what helps, so the exact figures matter little.
var Intervals = []time.Duration{
	10 * time.Minute,
	24 * time.Hour,
	3 * 24 * time.Hour,
	7 * 24 * time.Hour,
	21 * 24 * time.Hour,
}

// Card is one question's place in the schedule.
type Card struct {
	// Box is 0 for the first box, up to len(Intervals)-1.
	Box int `json:"box"`
	// Due is when the question should be asked again.
	Due time.Time `json:"due"`
	// Seen is when it was last answered; of two records of one card,
	// the one seen last wins.
	Seen time.Time `json:"seen"`
	// Retired says a right answer in the last box took it out of review.
	Retired bool `json:"retired,omitempty"`
}

// Schedule is a Leitner schedule: Intervals[i] is box i's wait.
type Schedule struct{ Intervals []time.Duration }

// Default is the schedule of the package's Intervals.
func Default() Schedule { return Schedule{Intervals: Intervals} }

// Answer is card after an answer at now (had says whether the question
// was in review at all). A miss puts it in the first box, due after the
// first interval. A right answer to a question not in review leaves it
// out (ok false); one given before the card is due changes nothing, so a
// retry straight after a miss does not skip the wait; one given when it
// is due moves the card up a box, or retires it from the last.
func (s Schedule) Answer(card Card, had, right bool, now time.Time) (c Card, ok bool) {
	switch {
	case !right:
		return Card{Box: 0, Due: now.Add(s.wait(0)), Seen: now}, true
	case !had:
		return Card{}, false
	case card.Retired || now.Before(card.Due):
		return card, true
	case card.Box >= len(s.Intervals)-1:
		return Card{Box: card.Box, Due: card.Due, Seen: now, Retired: true}, true
	}
	box := card.Box + 1
	return Card{Box: box, Due: now.Add(s.wait(box)), Seen: now}, true
}

// wait is box's interval; a box past the schedule's end takes the last.
func (s Schedule) wait(box int) time.Duration {
	if len(s.Intervals) == 0 {
		return 0
	}
	return s.Intervals[min(max(box, 0), len(s.Intervals)-1)]
}

// Clamp brings a card read from a file back into the schedule: a box
// below zero or past the last is moved to the nearest one.
func (s Schedule) Clamp(c Card) Card {
	c.Box = min(max(c.Box, 0), max(len(s.Intervals)-1, 0))
	return c
}

// IsDue reports whether the card should be asked at now.
func (c Card) IsDue(now time.Time) bool { return !c.Retired && !now.Before(c.Due) }

// Due lists the ids of the cards due at now, the longest overdue first
// (ids in order among equals), so a session asks the oldest misses first.
func Due(cards map[string]Card, now time.Time) []string {
	var ids []string
	for id, c := range cards {
		if c.IsDue(now) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cards[a].Due.Compare(cards[b].Due), cmp.Compare(a, b))
	})
	return ids
}

// Next is the earliest due time among the cards still in review that
// are not due at now, and false when there is none.
func Next(cards map[string]Card, now time.Time) (time.Time, bool) {
	var next time.Time
	for _, c := range cards {
		if c.Retired || c.IsDue(now) {
			continue
		}
		if next.IsZero() || c.Due.Before(next) {
			next = c.Due
		}
	}
	return next, !next.IsZero()
}

// Newer reports whether a should replace b when two records of one card
// meet (two programs saved progress): the one answered last wins.
func Newer(a, b Card) bool { return a.Seen.After(b.Seen) }
