package timeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// The lanes' violation marks (!) are the checker's findings, not the
// replicas' beliefs: two replicas acting as owner at once marks the ones
// etcd did not hold (the holder is etcd's truth; when etcd held neither
// key, both), and a stale write the resource accepted marks its writer.
// The monitor's live InvariantViolated events stay as the columns that
// say so in words; the marks go on the first of those at the finding's
// instant, or on the column of the act that made it.

// markFindings sets the violation marks of tl from the checker's
// findings on its events: per part where the run has parts, as the
// verdict judges them.
func (tl *timeline) markFindings() {
	if len(tl.items) == 0 {
		return
	}
	if tl.ownRules {
		tl.markOwnViolations()
		return
	}
	parts := history.Parts(&history.History{Events: tl.events})
	if len(parts) > 1 {
		parts = parts[1:] // the whole run is parts[0]; its parts are judged apart
	}
	itemOf, byTime := tl.itemOfEvent(), tl.eventsByTime()
	lane := tl.laneIndex()
	mark := func(col int, who string) {
		if l, ok := lane[who]; ok && col >= 0 && col < len(tl.states) {
			tl.states[col][l].violated = true
		}
	}
	for _, f := range parts {
		for _, o := range f.TwoOwners {
			col := tl.findingColumn(itemOf, byTime[o.At], o.Acting)
			for _, name := range o.Names {
				if name != o.Holder {
					mark(col, name)
				}
			}
			tl.noteTruth(col, o)
		}
		for _, w := range f.Stale {
			if w.Accepted {
				mark(tl.findingColumn(itemOf, byTime[w.At], w.Replica), w.Replica)
			}
		}
	}
}

// markOwnViolations marks, in a run judged by rules of its own, the
// replica each violation event names (the lab screen puts the verdict's
// violation in the history as one): the generic checker's two owners at
// once would mark a cut-off leader whose refused writes those rules
// rightly call held.
func (tl *timeline) markOwnViolations() {
	lane := tl.laneIndex()
	for j, col := range tl.itemOfEvent() {
		e := tl.events[j]
		if l, ok := lane[e.Replica]; ok && col >= 0 && e.Kind == history.InvariantViolated {
			tl.states[col][l].violated = true
		}
	}
}

// noteTruth keeps, for item col, whose key etcd held when o's owners
// acted at once.
func (tl *timeline) noteTruth(col int, o history.Overlap) {
	if col < 0 {
		return
	}
	if tl.truth == nil {
		tl.truth = map[int]string{}
	}
	if o.Holder == "" {
		tl.truth[col] = "etcd held neither's key"
		return
	}
	var others []string
	for _, n := range o.Names {
		if n != o.Holder {
			others = append(others, n)
		}
	}
	tl.truth[col] = fmt.Sprintf("etcd held %s's key, so %s acted on belief alone", o.Holder, strings.Join(others, " and "))
}

// itemOfEvent is, for every event, the item it is in (-1 for the events
// the timeline leaves out).
func (tl timeline) itemOfEvent() []int {
	out := make([]int, len(tl.events))
	for i := range out {
		out[i] = -1
	}
	for i, it := range tl.items {
		for j := it.first; j <= it.last; j++ {
			out[j] = i
		}
	}
	return out
}

// eventsByTime is the indices of the events at each instant, in order.
func (tl timeline) eventsByTime() map[time.Duration][]int {
	out := map[time.Duration][]int{}
	for j, e := range tl.events {
		out[e.At] = append(out[e.At], j)
	}
	return out
}

// findingColumn is the item a finding made by who's act is marked in,
// given the events of the finding's instant (at): the first violation
// column of that instant from the act on, else the act's own column; -1
// when no event of who's is at that instant.
func (tl timeline) findingColumn(itemOf []int, at []int, who string) int {
	act := -1
	for _, j := range at {
		e := tl.events[j]
		if itemOf[j] < 0 {
			continue
		}
		if act < 0 && e.Replica == who && e.Kind != history.InvariantViolated {
			act = j
		}
		if act >= 0 && e.Kind == history.InvariantViolated && tl.items[itemOf[j]].fold == nil {
			return itemOf[j]
		}
	}
	if act < 0 {
		return -1
	}
	return itemOf[act]
}
