package class

import (
	"fmt"
	"slices"
	"time"
)

// FutureSlack is how far ahead of the board's clock a learner's times may
// be and still count: clocks on laptops drift, but not by days.
const FutureSlack = 5 * time.Minute

// Check says what in a learner's summary the course cannot have produced:
// lessons, pages or labs it does not have, quiz scores outside 0–100%,
// times in the future. A learner writes their own summary (their role may
// write under their prefix), so the board believes nothing it has not
// checked; an empty result means the summary is plausible.
func (c Course) Check(s Summary, now time.Time) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if s.Unreadable != "" {
		return []string{s.Unreadable}
	}
	limit := now.Add(FutureSlack)
	if s.Updated.After(limit) {
		bad("updated %s, later than now", s.Updated.UTC().Format(time.RFC3339))
	}
	pages := map[string]int{}
	for _, l := range c.Lessons {
		pages[l.ID] = l.Pages
	}
	for _, id := range sortedKeys(s.Lessons) {
		l := s.Lessons[id]
		n, ok := pages[id]
		if !ok {
			bad("lesson %q is not in the course", id)
			continue
		}
		if p := badPage(l.Read, n); p != "" {
			bad("lesson %q: %s", id, p)
		}
		if l.QuizBest < 0 || l.QuizBest > 1 {
			bad("lesson %q: quiz score %.0f%% is outside 0–100%%", id, 100*l.QuizBest)
		}
		if l.QuizBest > 0 && !l.QuizTaken {
			bad("lesson %q: a quiz score without a quiz taken", id)
		}
	}
	for _, id := range sortedKeys(s.Labs) {
		if !slices.Contains(c.Labs, id) {
			bad("lab %q is not in the course", id)
			continue
		}
		if at := s.Labs[id].Passed; at.After(limit) {
			bad("lab %q passed %s, later than now", id, at.UTC().Format(time.RFC3339))
		}
	}
	return problems
}

// badPage describes the first page number that a lesson of n pages
// cannot have, or a list that is not sorted without repeats.
func badPage(read []int, n int) string {
	for i, p := range read {
		if p < 0 || p >= n {
			return fmt.Sprintf("page %d does not exist (the lesson has %d)", p+1, n)
		}
		if i > 0 && p <= read[i-1] {
			return "pages read are repeated or out of order"
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
