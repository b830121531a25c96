package history

import "time"

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
	var at time.Duration
	found := false
	see := func(t time.Duration) {
		if !found || t < at {
			at, found = t, true
		}
	}
	if len(f.TwoOwners) > 0 {
		see(f.TwoOwners[0].At)
	}
	if len(f.Stale) > 0 {
		see(f.Stale[0].At)
	}
	if len(f.Extensions) > 0 {
		see(f.Extensions[0].At)
	}
	return at, found
}
