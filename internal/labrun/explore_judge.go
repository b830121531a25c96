package labrun

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// Judging a run that broke a rule: the reference under the same faults
// says whose the failure is; a learner's violation is then shrunk and
// confirmed.

// judge runs the reference under a learner's run's faults: a limit when
// it fails too, else the learner's violation, shrunk and confirmed.
func (x *explorer) judge(ctx context.Context, pr plannedRun, h history.History) (Cell, string) {
	mine := failed(*h.Verdict)
	refFaults := x.forReference(pr.faults)
	var ref history.History
	if refFaults != nil {
		r, err := x.unplanned(ctx, true, refFaults, history.Params{Seed: x.o.Seed})
		if err == nil && r.Verdict != nil && !r.Verdict.Showed {
			theirs := failed(*r.Verdict)
			mine = beyond(mine, theirs)
			if len(mine) == 0 {
				x.mu.Lock()
				x.report.Limits = append(x.report.Limits, Limit{Faults: pr.faults, Learner: failed(*h.Verdict), Reference: theirs})
				x.mu.Unlock()
				return CellLimit, "broke " + names(failed(*h.Verdict)) + ", and so did the reference: a limit, not your bug"
			}
		}
		ref = r
	}
	v := x.shrink(ctx, pr.faults, h, propertySet(mine))
	v.Reference = ref
	if rf := x.forReference(v.Faults); rf != nil {
		// The reference on the smallest run's faults, replicas and end:
		// what its first divergence is read against, and a second look
		// at whether it keeps the rules there. A limit that shows only
		// now and then (a lost Acquire answer leaves a lock until its
		// lease ends: no-holder, or not, by a few milliseconds) held in
		// the reference's first run and broke the reference's own code
		// in the learner's place: both runs of the reference must keep
		// the rule for it to count against the learner.
		if r, err := x.unplanned(ctx, true, rf, smallest(x.o.Seed, v.History.Params)); err == nil {
			v.Reference = r
			if r.Verdict != nil && !r.Verdict.Showed {
				if v.Findings = beyond(v.Findings, failed(*r.Verdict)); len(v.Findings) == 0 {
					x.mu.Lock()
					x.report.Limits = append(x.report.Limits, Limit{Faults: v.Faults, Learner: failed(*v.History.Verdict), Reference: failed(*r.Verdict)})
					x.mu.Unlock()
					return CellLimit, "broke " + names(failed(*v.History.Verdict)) + ", and so did the reference when run again: a limit, not your bug"
				}
			}
		}
	}
	return x.record(ctx, v)
}

// record counts a violation once it is confirmed (none once another
// was, and the runs still going were stopped); a failure its reruns
// did not bring back nearly every time is said but not counted against the
// learner's code (a false alarm costs more than a miss, and a replay
// that mostly holds teaches the learner their bug is fine).
func (x *explorer) record(ctx context.Context, v Violation) (Cell, string) {
	if ctx.Err() != nil {
		return CellNotTried, "stopped: a violation was found meanwhile"
	}
	if !v.Confirmed {
		x.confirm(ctx, &v)
		if !v.Confirmed && v.longer != nil && ctx.Err() == nil {
			// Stopped early, the run broke the rule once; the run
			// that went on to its own end may break it every time (a
			// replica that hangs as it is told to stop needs the time
			// to be seen hanging).
			l := v.longer
			v.History, v.Findings, v.longer = l.history, named(failed(*l.history.Verdict), propertySet(v.Findings)), nil
			v.Shrunk = slices.DeleteFunc(slices.Clone(v.Shrunk), func(s string) bool { return s == l.stop })
			x.confirm(ctx, &v)
		}
		if ctx.Err() != nil {
			return CellNotTried, "stopped: a violation was found meanwhile"
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !v.Confirmed {
		x.report.Unconfirmed = append(x.report.Unconfirmed, v)
		return CellUnconfirmed, fmt.Sprintf("broke %s, and again in %d of %d reruns: not counted", names(v.Findings), v.Again, v.Tries)
	}
	x.report.Violations = append(x.report.Violations, v)
	x.found = true
	if !x.o.All && x.endRest != nil {
		x.endRest()
	}
	return CellViolated, "VIOLATION " + names(v.Findings) + "; the reference held"
}

// names lists the findings' property (or violation) names.
func names(fs []history.Finding) string {
	s := ""
	for i, f := range fs {
		if i > 0 {
			s += ", "
		}
		n := f.Property
		if f.Violation != "" {
			n = f.Violation
		}
		s += n
	}
	return s
}

// forReference maps the learner's faults onto the reference's call
// sites: the same lab function (Entry) and RPC, the k-th such site by
// line as the learner's is the k-th of theirs. nil when the reference
// sends no such request (it cannot be hit the same way).
func (x *explorer) forReference(faults []history.RequestFault) []history.RequestFault {
	var mine []history.CallSite
	for _, row := range x.report.Grid {
		mine = append(mine, row.Site)
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].Line < mine[j].Line })
	var theirs []history.CallSite
	for _, r := range x.refSites {
		theirs = append(theirs, r.Site)
	}
	var out []history.RequestFault
	for _, f := range faults {
		s, ok := matchSite(f.Site, mine, theirs)
		if !ok {
			return nil
		}
		f.Site = s
		out = append(out, f)
	}
	return out
}

// matchSite finds the site of theirs that plays the part s plays in
// mine. Within the function that sent it (Func), when the reference has
// that function too: the k-th request of the same RPC when both send as
// many of them from there, else the k-th request of any RPC when both
// send as many requests from there (a check made with a Txn where the
// reference reads with a Range is its check, not its resign). Else the
// same entry and RPC, in the same place in line order (the last of
// theirs when they have fewer).
func matchSite(s history.CallSite, mine, theirs []history.CallSite) (history.CallSite, bool) {
	if t, ok := matchInFunc(s, mine, theirs); ok {
		return t, true
	}
	like := func(sites []history.CallSite) []history.CallSite {
		return distinct(sites, func(t history.CallSite) bool { return t.Entry == s.Entry && t.RPC == s.RPC })
	}
	key := s.Key()
	a, b := like(mine), like(theirs)
	if len(b) == 0 {
		// The reference sends no such request from that function (it
		// deletes in a Txn where yours sends a DeleteRange, say): the
		// same fault at its request from the same function, in the same
		// place, else no comparison can be made.
		a, b = likeEntry(s, mine), likeEntry(s, theirs)
		if len(b) == 0 {
			return history.CallSite{}, false
		}
	}
	for i, t := range a {
		if t.Key() == key {
			return b[min(i, len(b)-1)], true
		}
	}
	return b[0], true
}

// matchInFunc matches s by its place among the requests its function
// sends, when the reference's function of the same name sends as many
// (of s's RPC, else of any).
func matchInFunc(s history.CallSite, mine, theirs []history.CallSite) (history.CallSite, bool) {
	if s.Func == "" {
		return history.CallSite{}, false
	}
	for _, same := range []func(t history.CallSite) bool{
		func(t history.CallSite) bool { return t.Entry == s.Entry && t.Func == s.Func && t.RPC == s.RPC },
		func(t history.CallSite) bool { return t.Entry == s.Entry && t.Func == s.Func },
	} {
		a, b := distinct(mine, same), distinct(theirs, same)
		if len(a) == 0 || len(a) != len(b) {
			continue
		}
		for i, t := range a {
			if t.Key() == s.Key() {
				return b[i], true
			}
		}
	}
	return history.CallSite{}, false
}

// distinct are the sites that keep, each once, by line (and RPC, for
// the requests one call sends).
func distinct(sites []history.CallSite, keep func(history.CallSite) bool) []history.CallSite {
	var out []history.CallSite
	seen := map[string]bool{}
	for _, t := range sites {
		if keep(t) && !seen[t.Key()] {
			seen[t.Key()] = true
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].RPC < out[j].RPC
	})
	return out
}

// likeEntry are the sites of sites in s's function, each once, by line.
func likeEntry(s history.CallSite, sites []history.CallSite) []history.CallSite {
	return distinct(sites, func(t history.CallSite) bool { return t.Entry == s.Entry })
}

// shrink makes a violation smaller by running it again: each fault
// alone (fewest faults), then with the fewest replicas, then stopped as
// early as it still breaks the rules (earliest end); record confirms it.
func (x *explorer) shrink(ctx context.Context, faults []history.RequestFault, h history.History, want map[string]bool) Violation {
	v := Violation{Faults: faults, Findings: named(failed(*h.Verdict), want), History: h}
	if len(faults) > 1 {
		for _, f := range faults {
			one := []history.RequestFault{f}
			if hh, ok := x.violates(ctx, one, history.Params{Seed: x.o.Seed}, want); ok {
				v.Shrunk = append(v.Shrunk, fmt.Sprintf("%d faults to 1", len(faults)))
				v.Faults, v.History, v.Findings = one, hh, named(failed(*hh.Verdict), want)
				break
			}
		}
	}
	fewest := x.o.Lab.scenario.MinReplicas
	if n := v.History.Params.Replicas; fewest > 0 && n > fewest {
		if hh, ok := x.violates(ctx, v.Faults, history.Params{Seed: x.o.Seed, Replicas: fewest}, want); ok {
			v.Shrunk = append(v.Shrunk, fmt.Sprintf("%d replicas to %d", n, fewest))
			v.History, v.Findings = hh, named(failed(*hh.Verdict), want)
		}
	}
	x.shrinkEnd(ctx, &v, want)
	return v
}

// A violation's smallest run is run again, one rerun at a time, before
// it counts: it counts when the first three reruns all broke the rule
// again, or when five of six did, and the reruns stop at the second
// that did not. A failure that shows on one run in ten (a race at the
// replicas' stop, say) or on every other run (a pause that lands before
// or after a keep-alive's first answer) would leave the learner a
// faults file whose replay mostly holds, and another fault may show the
// same bug every time: a run that breaks the rule nine times in ten
// counts with odds of nine in ten, one that breaks it every other time
// with odds under one in five. While the reruns are quick (a lab 09
// run stopped early takes a second) they go on to ten, of which nine
// must break the rule: a race that a fault makes likely but not certain
// (seven times in ten) then counts with odds of one in seven, not one
// in two. The reruns go one at a time, on their own (the other runs end
// first, none starts meanwhile), as the learner's replay will: three at
// once on two cores timed a hang at the stop differently, and confirmed
// runs whose replay mostly held.
const (
	confirmRuns   = 3  // reruns that count when every one broke the rule
	confirmSome   = 6  // reruns that count when all but one did
	confirmMost   = 10 // reruns at most, while they are quick
	confirmMisses = 2  // reruns that did not break it, enough to give up
)

// confirmQuick is how long reruns count as quick: past it, a
// confirmation ends as soon as its count is known.
const confirmQuick = 30 * time.Second

// confirm runs v's smallest run again and says whether it counts.
func (x *explorer) confirm(ctx context.Context, v *Violation) {
	x.quiet.Lock()
	defer x.quiet.Unlock()
	want := propertySet(v.Findings)
	p := smallest(x.o.Seed, v.History.Params)
	began := time.Now()
	v.Tries, v.Again = 0, 0
	for ctx.Err() == nil {
		h, err := x.unplannedNow(ctx, false, v.Faults, p)
		v.Tries++
		if brokeAgain(h, err, v.Faults, want) {
			v.Again++
		}
		misses, quick := v.Tries-v.Again, time.Since(began) < x.confirmQuick
		switch {
		case misses >= confirmMisses:
			v.Confirmed = false
			return
		case v.Tries == confirmMost, !quick && (misses == 0 && v.Tries >= confirmRuns || v.Tries >= confirmSome):
			v.Confirmed = true
			return
		}
	}
}

// earlyEnds are the watches, after the faults are done, that shrinking
// tries in turn, as multiples of the TTL (a run's own is 3 TTLs): the
// first that still breaks the rules is the earliest end kept.
var earlyEnds = []float64{0.25, 1, 2}

// shrinkEnd stops v's run as early as it still breaks the rules. The
// ends are tried all at once (each run is mostly waiting for its
// faults), and the earliest that broke them is kept: one run's time
// instead of three, which keeps a lab's exploration near its budget.
func (x *explorer) shrinkEnd(ctx context.Context, v *Violation, want map[string]bool) {
	ttl := time.Duration(v.History.Timing.AskedTTL) * time.Second
	if ttl <= 0 {
		ttl = time.Duration(x.o.Lab.scenario.DefaultTTL) * time.Second
	}
	hs := make([]history.History, len(earlyEnds))
	oks := make([]bool, len(earlyEnds))
	ps := make([]history.Params, len(earlyEnds))
	var wg sync.WaitGroup
	for i, k := range earlyEnds {
		ps[i] = smallest(x.o.Seed, v.History.Params)
		ps[i].Watch = time.Duration(k * float64(ttl))
		wg.Go(func() { hs[i], oks[i] = x.violates(ctx, v.Faults, ps[i], want) })
	}
	wg.Wait()
	for i, ok := range oks {
		if ok {
			stop := fmt.Sprintf("stopped %.1f s after the faults instead of %.0f s", ps[i].Watch.Seconds(), 3*ttl.Seconds())
			v.Shrunk = append(v.Shrunk, stop)
			v.longer = &longerRun{history: v.History, stop: stop}
			v.History, v.Findings = hs[i], named(failed(*hs[i].Verdict), want)
			return
		}
	}
}

// smallest are the parameters of a shrunk run: its replicas and end,
// the exploration's seed.
func smallest(seed uint64, p history.Params) history.Params {
	return history.Params{Seed: seed, Replicas: p.Replicas, Watch: p.Watch}
}

// violates runs the learner's code under faults: whether every fault
// fired and one of the rules in want broke.
func (x *explorer) violates(ctx context.Context, faults []history.RequestFault, p history.Params, want map[string]bool) (history.History, bool) {
	h, err := x.unplanned(ctx, false, faults, p)
	return h, brokeAgain(h, err, faults, want)
}

// brokeAgain says whether a run fired every fault and broke one of the
// rules in want.
func brokeAgain(h history.History, err error, faults []history.RequestFault, want map[string]bool) bool {
	return err == nil && h.Verdict != nil && !h.Verdict.Showed && len(Fired(&h)) == len(faults) && len(named(failed(*h.Verdict), want)) > 0
}

// The learner's findings are judged one by one against the reference's
// run on the same faults: a rule both broke is a limit of the protocol
// (a check, then an act, is never atomic: both begin work a moment after
// their key went), a rule only the learner's code broke is theirs (it
// kept working long after).

// findingName is a finding's name: its violation, else its property.
func findingName(f history.Finding) string {
	if f.Violation != "" {
		return f.Violation
	}
	return f.Property
}

// beyond are mine's findings whose rule theirs did not break.
func beyond(mine, theirs []history.Finding) []history.Finding {
	broke := propertySet(theirs)
	var out []history.Finding
	for _, f := range mine {
		if !broke[findingName(f)] {
			out = append(out, f)
		}
	}
	return out
}

// propertySet names the findings' rules.
func propertySet(fs []history.Finding) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		out[findingName(f)] = true
	}
	return out
}

// named are the findings whose rule is in want (all of them for nil).
func named(fs []history.Finding, want map[string]bool) []history.Finding {
	if want == nil {
		return fs
	}
	var out []history.Finding
	for _, f := range fs {
		if want[findingName(f)] {
			out = append(out, f)
		}
	}
	return out
}

// unplanned is a run the plan did not count (a reference's beside a
// violation, a shrinking step): it joins the planned count as it
// starts, and the done count as it ends.
func (x *explorer) unplanned(ctx context.Context, reference bool, faults []history.RequestFault, p history.Params) (history.History, error) {
	x.quiet.RLock()
	defer x.quiet.RUnlock()
	return x.unplannedNow(ctx, reference, faults, p)
}

// unplannedNow is unplanned for a confirmation, which holds quiet.
func (x *explorer) unplannedNow(ctx context.Context, reference bool, faults []history.RequestFault, p history.Params) (history.History, error) {
	x.mu.Lock()
	x.report.Planned++
	x.mu.Unlock()
	h, err := x.run(ctx, reference, faults, p, false)
	x.mu.Lock()
	x.report.Runs++
	x.done++
	prog := x.progressLocked(describe(faults) + ": " + map[bool]string{true: "the reference's run", false: "a shrinking run"}[reference])
	x.mu.Unlock()
	x.tell(prog)
	return h, err
}
