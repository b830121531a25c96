package labrun

import (
	"slices"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// The stop's kinds in the plan (request_stop.go). Where they hit makes
// little difference: a sever cuts the replica off until the run's stop,
// wherever it was; a stop ends its Run wherever it was waiting. So a few
// runs are enough, and they come first: a sever of the owner (its
// step-down, resign or revoke, is what waits on the cut network; a
// waiter's Campaign cleans up after itself
// with the client's own context, so a severed waiter hangs in etcd's
// code, whoever wrote the rest), and a stop of the newcomer and of a
// waiter at their first request (not a stream's answer, which may come
// only once the wait is over), while they still wait their turn. Their
// other cells come last, after every other kind.

// stopWave takes the early runs of the stop's kinds out of rest (depth 1
// after its first tier): the sever of the first site the owner reached
// in the calm run (or, when it reached none, of the last request the
// first leader sent before it led), and the stop of the first request
// the newcomer and a waiter sent.
func (x *explorer) stopWave(rest []plannedRun) (early, later []plannedRun) {
	var want []history.RequestFault // site and role, in the order picked
	pick := func(role string, kind history.FaultAt, streams bool) {
		for _, r := range x.reachOrder() {
			if r.HitRole == role && (streams || !r.Site.Stream()) {
				want = append(want, history.RequestFault{Fault: kind, Role: role, Site: r.Site})
				return
			}
		}
	}
	pick(replica.RoleOwner, history.SeverAfter, true)
	if len(want) == 0 {
		// The owner sent nothing in the calm run (lab 07's leader whose
		// keep-alive answers come a third of a 60 s TTL apart, after
		// its term): sever the first leader at the last request it sent
		// before it led, as it takes over.
		if r, ok := x.lastBeforeLead(); ok {
			want = append(want, history.RequestFault{Fault: history.SeverAfter, Role: r.HitRole, Site: r.Site})
		}
	}
	pick(replica.RoleNewcomer, history.StopAfter, false)
	pick(replica.RoleWaiter, history.StopAfter, false)
	taken := make([]bool, len(rest))
	for _, w := range want {
		for i, pr := range rest {
			f := pr.faults[0]
			if !taken[i] && f.Fault == w.Fault && f.Role == w.Role && f.Site.Key() == w.Site.Key() {
				taken[i] = true
				early = append(early, pr)
				break
			}
		}
	}
	for i, pr := range rest {
		if !taken[i] {
			later = append(later, pr)
		}
	}
	return early, later
}

// reachOrder is the sites and roles of the calm run in the order they
// were first reached (the grid's order when there is no calm run: a
// test's explorer).
func (x *explorer) reachOrder() []history.RequestFault {
	if r := Reached(&x.report.CalmRun); len(r) > 0 {
		return r
	}
	var out []history.RequestFault
	for _, row := range x.report.Grid {
		out = append(out, history.RequestFault{Site: row.Site, HitRole: row.Role})
	}
	return out
}

// lastBeforeLead is the site the calm run's first leader reached last,
// in a request of its own, before it first led (took the lock, or had
// its Work called): false when no replica led, or it sent none.
func (x *explorer) lastBeforeLead() (history.RequestFault, bool) {
	events := x.report.CalmRun.Events
	lead := slices.IndexFunc(events, func(e history.Event) bool { return e.Kind == history.Acquired && e.Replica != "" })
	if lead < 0 {
		return history.RequestFault{}, false
	}
	leader := events[lead].Replica
	for i := lead - 1; i >= 0; i-- {
		e := events[i]
		if e.Replica != leader || e.Kind != history.Note || e.Facts == nil || e.Facts.Op != history.OpReached || e.Facts.Request == nil {
			continue
		}
		if r := *e.Facts.Request; !r.Site.Stream() {
			return r, true
		}
	}
	return history.RequestFault{}, false
}
