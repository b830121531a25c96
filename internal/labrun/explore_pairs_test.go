package labrun

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

var (
	pairOwnerSite  = history.CallSite{File: "labs/05_etcd_lock/etcdlock.go", Line: 40, Func: "Release", Entry: "Release", RPC: "Txn"}
	pairWaiterSite = history.CallSite{File: "labs/05_etcd_lock/etcdlock.go", Line: 20, Func: "Acquire", Entry: "Acquire", RPC: "Txn"}
)

// pairExplorer is an explorer over a grid of one owner's site and one
// waiter's, whose runs are run (no etcd).
func pairExplorer(run func(faults []history.RequestFault) history.History) *explorer {
	reached := []history.RequestFault{{Site: pairOwnerSite, HitRole: replica.RoleOwner}, {Site: pairWaiterSite, HitRole: replica.RoleWaiter}}
	x := &explorer{o: ExploreOptions{Lab: lab05, Seed: 7, Parallel: 2}, report: &ExploreReport{Lab: "05_etcd_lock"}}
	x.report.Grid = grid(reached)
	x.refSites = reached
	x.run = func(_ context.Context, _ bool, faults []history.RequestFault, p history.Params, _ bool) (history.History, error) {
		h := run(faults)
		h.Params = p
		return h, nil
	}
	return x
}

// firedRun is a run under faults that kept every rule, each fault
// recorded as fired.
func firedRun(p history.Params, faults []history.RequestFault) history.History {
	h := history.History{Params: p, Verdict: &history.Verdict{Showed: true}}
	for i := range faults {
		f := faults[i]
		h.Events = append(h.Events, history.Event{Kind: history.AnswerLost, Facts: &history.Facts{Request: &f}})
	}
	return h
}

// TestExplorePlanTriesPairsAfterTheFirstTier: after the stops, depth
// 1's first tier comes, then a wave of pairs (one fault on the owner,
// one on the waiter), then the rest of depth 1; every single fault is
// planned once.
func TestExplorePlanTriesPairsAfterTheFirstTier(t *testing.T) {
	x := pairExplorer(nil)
	plan := x.plan()
	singles, i := 0, 0
	for i < len(plan) && (plan[i].faults[0].Fault == history.SeverAfter || plan[i].faults[0].Fault == history.StopAfter) {
		i++
	}
	for ; i < len(plan) && len(plan[i].faults) == 1; i++ {
		if f := plan[i].faults[0]; !x.firstTier(f) {
			t.Fatalf("run %d is %s, of a later tier, before any pair", i, f)
		}
		singles++
	}
	if singles != 4 {
		t.Fatalf("%d single faults before the first pair, want the first tier's 4 (one per site and role, and a failed write at each site)", singles)
	}
	for j := i; j < i+2; j++ {
		if len(plan[j].faults) != 2 {
			t.Fatalf("run %d has %d faults, want the first wave of pairs (2 runs)", j, len(plan[j].faults))
		}
		a, b := plan[j].faults[0], plan[j].faults[1]
		if a.Role != replica.RoleOwner || b.Role == replica.RoleOwner || a.ID == b.ID {
			t.Errorf("pair %s; %s: want the owner's fault, then another role's, with their own ids", a, b)
		}
	}
	n := 0
	for _, pr := range plan {
		if len(pr.faults) == 1 {
			n++
		}
	}
	if n != len(x.report.Grid)*len(history.FaultKinds()) {
		t.Errorf("%d single faults planned, want every site, role and kind once (%d)", n, len(x.report.Grid)*len(history.FaultKinds()))
	}
}

// TestExploreShrinksAPairToTheFaultThatShows: a run broke a rule under
// two faults, but only the waiter's matters: shrinking keeps that one,
// confirms it, and the reference (which holds) makes it a violation.
func TestExploreShrinksAPairToTheFaultThatShows(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	x := pairExplorer(func(faults []history.RequestFault) history.History {
		mu.Lock()
		runs++
		mu.Unlock()
		h := history.History{Verdict: &history.Verdict{Showed: true}}
		for i := range faults {
			f := faults[i]
			h.Events = append(h.Events, history.Event{Kind: history.AnswerLost, Facts: &history.Facts{Request: &f}})
			// The learner's code breaks one-holder when the waiter's
			// Acquire is hit (the reference's runs come here too;
			// referenceHolds makes them keep every rule).
			if f.Site == pairWaiterSite {
				h.Verdict = &history.Verdict{Showed: false, Findings: []history.Finding{{Property: "one-holder", Violation: "two-holders"}}}
			}
		}
		return h
	})
	x.run = referenceHolds(x.run)
	owner := history.RequestFault{ID: 1, Fault: history.PauseAfter, Role: replica.RoleOwner, Site: pairOwnerSite, Occurrence: 1}
	waiter := history.RequestFault{ID: 10004, Fault: history.LoseAnswer, Role: replica.RoleWaiter, Site: pairWaiterSite, Occurrence: 1}
	x.try(context.Background(), plannedRun{faults: []history.RequestFault{owner, waiter}})
	if len(x.report.Violations) != 1 {
		t.Fatalf("%d violations (limits %+v), want 1", len(x.report.Violations), x.report.Limits)
	}
	v := x.report.Violations[0]
	if len(v.Faults) != 1 || v.Faults[0].ID != waiter.ID || !v.Confirmed {
		t.Errorf("shrunk to %v (confirmed %v), want the waiter's fault alone, confirmed", v.Faults, v.Confirmed)
	}
	if !slices.Contains(v.Shrunk, "2 faults to 1") {
		t.Errorf("Shrunk = %q, want it to say 2 faults to 1", v.Shrunk)
	}
	if runs < 3 {
		t.Errorf("%d runs, want at least the pair's, the reference's and a shrinking one", runs)
	}
}

// referenceHolds wraps a run so that the reference's runs keep every
// rule: what a reference that is right looks like.
func referenceHolds(run func(context.Context, bool, []history.RequestFault, history.Params, bool) (history.History, error)) func(context.Context, bool, []history.RequestFault, history.Params, bool) (history.History, error) {
	return func(ctx context.Context, ref bool, faults []history.RequestFault, p history.Params, sites bool) (history.History, error) {
		h, err := run(ctx, ref, faults, p, sites)
		if ref {
			h.Verdict = &history.Verdict{Showed: true}
		}
		return h, err
	}
}

// TestExploreDoesNotCountAFailureSeenOnce: the learner's code broke a
// rule in its first run under the fault and never again (a busy
// machine's doing): after shrinking and two confirmations it is said
// as unconfirmed, not counted as a violation.
func TestExploreDoesNotCountAFailureSeenOnce(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	x := pairExplorer(func(faults []history.RequestFault) history.History {
		mu.Lock()
		runs++
		first := runs == 1
		mu.Unlock()
		h := firedRun(history.Params{}, faults)
		if first {
			h.Verdict = &history.Verdict{Showed: false, Findings: []history.Finding{{Property: "one-holder", Violation: "two-holders"}}}
		}
		return h
	})
	x.run = referenceHolds(x.run)
	waiter := history.RequestFault{ID: 4, Fault: history.LoseAnswer, Role: replica.RoleWaiter, Site: pairWaiterSite, Occurrence: 1}
	x.try(context.Background(), plannedRun{faults: []history.RequestFault{waiter}})
	if len(x.report.Violations) != 0 || len(x.report.Unconfirmed) != 1 {
		t.Fatalf("%d violations, %d unconfirmed; want 0 and 1", len(x.report.Violations), len(x.report.Unconfirmed))
	}
	for _, row := range x.report.Grid {
		if row.Site == pairWaiterSite && row.Cells[history.LoseAnswer] != CellUnconfirmed {
			t.Errorf("the waiter's lose cell is %q, want %q", row.Cells[history.LoseAnswer], CellUnconfirmed)
		}
	}
	if x.found {
		t.Error("an unconfirmed failure stopped the exploration as a violation would")
	}
}

// At a watch, opening it late and a stop at its first answer both come
// in the first tier; at a keep-alive, one that ends; at a request, a stop.
func TestExploreTiersBySite(t *testing.T) {
	watch := history.CallSite{File: "labs/07_election/election.go", Line: 35, RPC: replica.StreamWatch}
	keep := history.CallSite{File: "labs/07_election/election.go", Line: 91, RPC: replica.StreamKeepAlive}
	for _, c := range []struct {
		site history.CallSite
		kind history.FaultAt
		tier int
	}{
		{watch, history.HoldRequest, 0}, {watch, history.PauseAfter, 0}, {watch, history.FailBefore, 1},
		{keep, history.FailBefore, 0}, {keep, history.PauseAfter, 1},
		{pairWaiterSite, history.PauseAfter, 0}, {pairWaiterSite, history.HoldRequest, 1},
	} {
		if got := tierOf(c.site, c.kind); got != c.tier {
			t.Errorf("tier of %s at %s = %d, want %d", c.kind, c.site, got, c.tier)
		}
	}
}

// Where no request is sent as the owner (lab 05), pairs still come:
// two faults at two sites or roles.
func TestExplorePairsWithoutAnOwnersRequest(t *testing.T) {
	x := &explorer{o: ExploreOptions{Lab: lab05, Seed: 7, Parallel: 2}, report: &ExploreReport{Lab: "05_etcd_lock"}}
	x.report.Grid = grid([]history.RequestFault{{Site: pairOwnerSite, HitRole: replica.RoleWaiter}, {Site: pairWaiterSite, HitRole: replica.RoleWaiter}})
	pairs := x.pairs()
	if len(pairs) == 0 {
		t.Fatal("no pairs without an owner's request")
	}
	for _, pr := range pairs {
		if a, b := pr.faults[0], pr.faults[1]; a.Site.Key() == b.Site.Key() && a.Role == b.Role {
			t.Fatalf("pair %s; %s hits one site and role twice", a, b)
		}
	}
}

// TestExploreStopsTheOtherRunsAtTheFirstViolation: once a violation is
// confirmed (without All), a run that was waiting for the confirmation
// to end is stopped, not judged, shrunk and counted: the exploration
// ends with the one violation.
func TestExploreStopsTheOtherRunsAtTheFirstViolation(t *testing.T) {
	var mu sync.Mutex
	ranLive := false
	x := pairExplorer(nil)
	x.o.Budget = time.Minute
	x.start = time.Now()
	x.run = func(ctx context.Context, ref bool, faults []history.RequestFault, p history.Params, _ bool) (history.History, error) {
		h := firedRun(p, faults)
		switch {
		case faults[0].Site == pairOwnerSite:
			// A long run, going when the violation is found: it
			// holds its slot, so the next run waits for it.
			time.Sleep(300 * time.Millisecond)
			return h, nil
		case faults[0].Fault == history.HoldRequest:
			mu.Lock()
			ranLive = ranLive || ctx.Err() == nil
			mu.Unlock()
			return h, ctx.Err()
		case ref:
			return h, nil
		}
		h.Verdict = &history.Verdict{Findings: []history.Finding{{Property: "one-holder", Violation: "two-holders"}}}
		return h, nil
	}
	owner := plannedRun{faults: []history.RequestFault{{ID: 1, Fault: history.PauseAfter, Role: replica.RoleOwner, Site: pairOwnerSite, Occurrence: 1}}}
	waiter := plannedRun{faults: []history.RequestFault{{ID: 2, Fault: history.PauseAfter, Role: replica.RoleWaiter, Site: pairWaiterSite, Occurrence: 1}}}
	next := plannedRun{faults: []history.RequestFault{{ID: 3, Fault: history.HoldRequest, Role: replica.RoleWaiter, Site: pairWaiterSite, Occurrence: 1}}}
	done := make(chan struct{})
	go func() {
		x.explore(context.Background(), []plannedRun{owner, waiter, next})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the exploration went on after its first violation")
	}
	if len(x.report.Violations) != 1 || len(x.report.Unconfirmed) != 0 {
		t.Errorf("%d violations, %d unconfirmed; want the one, nothing else", len(x.report.Violations), len(x.report.Unconfirmed))
	}
	if ranLive {
		t.Error("the run waiting for the confirmation ran after the violation was confirmed")
	}
	for _, row := range x.report.Grid {
		if c := row.Cells[history.HoldRequest]; row.Site == pairWaiterSite && c != CellNotTried && c != "" {
			t.Errorf("the stopped run's cell is %v, want not tried", c)
		}
	}
}

// TestExploreCountsAFailureOnlyWhenItComesBack: the smallest run is run
// again, one rerun at a time; it counts when the first three broke the
// rule again, or five of six did, and the reruns stop at the second
// that did not. A race that shows one run
// in a few (the hang of a waiter stopped mid-read) or every other run
// is not counted, so its faults file is not handed to a learner whose
// replay would hold. When the run stopped early does not come back, the
// run that went on to its own end is confirmed instead (a hang at the
// stop needs the time to be seen).
func TestExploreCountsAFailureOnlyWhenItComesBack(t *testing.T) {
	// The learner's runs in order: 1 under the planned fault, 2-4 the
	// three early ends at once, then the reruns one at a time (up to
	// six, none once two missed); then, if the early end was not
	// confirmed, the reruns of the run to its own end.
	for _, c := range []struct {
		name        string
		broke       []int
		confirmed   bool
		again, runs int // of the last confirmation
		learners    int // the learner's runs in all
		early       bool
		quick       bool // the reruns are quick: up to ten
	}{
		{"every time", []int{1, 2, 3, 4, 5, 6, 7}, true, 3, 3, 7, true, false},
		{"all but the first", []int{1, 2, 6, 7, 8, 9, 10}, true, 5, 6, 10, true, false},
		{"all but the third", []int{1, 2, 5, 6, 8, 9, 10}, true, 5, 6, 10, true, false},
		{"missed twice in six", []int{1, 2, 5, 6, 8, 9}, false, 0, 2, 12, false, false},
		{"never back", []int{1, 2}, false, 0, 2, 8, false, false},
		{"back at its own end", []int{1, 2, 7, 8, 9}, true, 3, 3, 9, false, false},
		{"back at its own end, missed twice", []int{1, 2, 7, 8, 10}, false, 3, 5, 11, false, false},
		{"quick, every time", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, true, 10, 10, 14, true, true},
		{"quick, nine in ten", []int{1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14}, true, 9, 10, 14, true, true},
		{"quick, seven in ten", []int{1, 2, 3, 4, 5, 6, 7, 9, 10}, false, 0, 2, 13, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			x := pairExplorer(nil)
			if c.quick {
				x.confirmQuick = time.Hour
			}
			x.run = func(_ context.Context, ref bool, faults []history.RequestFault, p history.Params, _ bool) (history.History, error) {
				h := firedRun(p, faults)
				if ref {
					return h, nil
				}
				mu.Lock()
				n++
				broke := slices.Contains(c.broke, n)
				mu.Unlock()
				if broke {
					h.Verdict = &history.Verdict{Showed: false, Findings: []history.Finding{{Property: "no-failure", Violation: "hung-on-stop"}}}
				}
				return h, nil
			}
			waiter := history.RequestFault{ID: 4, Fault: history.FailBefore, Role: replica.RoleWaiter, Site: pairWaiterSite, Occurrence: 1}
			x.try(context.Background(), plannedRun{faults: []history.RequestFault{waiter}})
			var v Violation
			switch {
			case c.confirmed && len(x.report.Violations) == 1:
				v = x.report.Violations[0]
			case !c.confirmed && len(x.report.Unconfirmed) == 1 && len(x.report.Violations) == 0:
				v = x.report.Unconfirmed[0]
			default:
				t.Fatalf("%d violations, %d unconfirmed; want it confirmed: %v", len(x.report.Violations), len(x.report.Unconfirmed), c.confirmed)
			}
			if v.Confirmed != c.confirmed || v.Again != c.again || v.Tries != c.runs || n != c.learners {
				t.Errorf("confirmed %v, again in %d of %d reruns, %d runs of the learner's; want %v, %d of %d, %d",
					v.Confirmed, v.Again, v.Tries, n, c.confirmed, c.again, c.runs, c.learners)
			}
			if early := v.History.Params.Watch > 0; early != c.early || slices.ContainsFunc(v.Shrunk, func(s string) bool { return strings.HasPrefix(s, "stopped") }) != c.early {
				t.Errorf("stopped early: %v (shrunk: %q), want %v", early, v.Shrunk, c.early)
			}
			if x.found != c.confirmed {
				t.Errorf("the exploration stopped as at a violation: %v, want %v", x.found, c.confirmed)
			}
		})
	}
}

// TestExploreConfirmsOnItsOwn: a confirmation's reruns start once the
// runs going have ended, one after another, and no run starts beside
// them: they replay the failure as a learner's replay will, on a quiet
// machine.
func TestExploreConfirmsOnItsOwn(t *testing.T) {
	var mu sync.Mutex
	var slowEnd time.Time
	var rerunStarts, rerunEnds []time.Time
	learner := 0
	x := pairExplorer(nil)
	x.o.Budget = time.Minute
	x.start = time.Now()
	x.run = func(ctx context.Context, ref bool, faults []history.RequestFault, p history.Params, _ bool) (history.History, error) {
		h := firedRun(p, faults)
		if faults[0].Site == pairOwnerSite {
			// A long run, going when the violation is found.
			time.Sleep(500 * time.Millisecond)
			mu.Lock()
			slowEnd = time.Now()
			mu.Unlock()
			return h, nil
		}
		if ref {
			return h, nil
		}
		mu.Lock()
		learner++
		rerun := learner >= 5
		if rerun {
			rerunStarts = append(rerunStarts, time.Now())
		}
		mu.Unlock()
		if rerun {
			time.Sleep(50 * time.Millisecond)
			mu.Lock()
			rerunEnds = append(rerunEnds, time.Now())
			mu.Unlock()
		}
		h.Verdict = &history.Verdict{Findings: []history.Finding{{Property: "one-holder", Violation: "two-holders"}}}
		return h, nil
	}
	slow := plannedRun{faults: []history.RequestFault{{ID: 1, Fault: history.PauseAfter, Role: replica.RoleOwner, Site: pairOwnerSite, Occurrence: 1}}}
	waiter := plannedRun{faults: []history.RequestFault{{ID: 2, Fault: history.PauseAfter, Role: replica.RoleWaiter, Site: pairWaiterSite, Occurrence: 1}}}
	x.explore(context.Background(), []plannedRun{slow, waiter})
	if len(x.report.Violations) != 1 || len(rerunStarts) != confirmRuns {
		t.Fatalf("%d violations, %d reruns; want one, confirmed by %d reruns", len(x.report.Violations), len(rerunStarts), confirmRuns)
	}
	for i, at := range rerunStarts {
		if at.Before(slowEnd) {
			t.Errorf("a rerun began %v before the run going had ended", slowEnd.Sub(at))
		}
		if i > 0 && at.Before(rerunEnds[i-1]) {
			t.Errorf("rerun %d began %v before rerun %d had ended", i+1, rerunEnds[i-1].Sub(at), i)
		}
	}
}
