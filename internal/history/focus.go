package history

import (
	"slices"
	"time"
)

// Focus is the instant a history's verdict is about, where a timeline
// ends its cursor so that the screen and the verdict point at the same
// thing: the earliest, over the parts the scenario's properties judge, of
// each part's first two owners at once, first stale write (taken or
// refused) and first lease extension; failing those, the last figure
// measured. false when the history shows none of them.
func Focus(h *History, shows []Property) (time.Duration, bool) {
	parts := Parts(h)
	var at time.Duration
	found := false
	for _, p := range shows {
		if p.When != nil && !p.When(h.Params) {
			continue
		}
		f := findPart(parts, p.Part)
		if f == nil {
			continue
		}
		if t, ok := f.firstFinding(); ok && (!found || t < at) {
			at, found = t, true
		}
	}
	if found {
		return at, true
	}
	for i := len(h.Events) - 1; i >= 0; i-- {
		if e := h.Events[i]; e.Kind == Measured {
			return e.At, true
		}
	}
	return 0, false
}

// firstFinding is the earliest overlap, stale write or lease extension
// the part shows.
func (f *Findings) firstFinding() (time.Duration, bool) {
	e, _, ok := f.first()
	return e.At, ok
}

// first is the event of the part's earliest overlap (the act that made
// it), stale write or lease extension, and the replicas it names: the
// owners at once, the writer, none for a lease. On a tie the overlap
// comes first, then the stale write.
func (f *Findings) first() (Event, []string, bool) {
	var e Event
	var who []string
	found := false
	see := func(x Event, names ...string) {
		if !found || x.At < e.At {
			e, who, found = x, names, true
		}
	}
	if len(f.TwoOwners) > 0 {
		o := f.TwoOwners[0]
		see(o.Event, actingFirst(o)...)
	}
	if len(f.Stale) > 0 {
		see(f.Stale[0].Event, f.Stale[0].Replica)
	}
	if len(f.Extensions) > 0 {
		see(f.Extensions[0].Event)
	}
	return e, who, found
}

// actingFirst is an overlap's owners, the one whose act made it first.
func actingFirst(o Overlap) []string {
	if !slices.Contains(o.Names, o.Acting) {
		return o.Names
	}
	out := []string{o.Acting}
	for _, n := range o.Names {
		if n != o.Acting {
			out = append(out, n)
		}
	}
	return out
}
