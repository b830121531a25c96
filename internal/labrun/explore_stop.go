package labrun

import (
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// The stop's kinds in the plan (request_stop.go). Where they hit makes
// little difference: a sever cuts the replica off until the run's stop,
// wherever it was; a stop ends its Run wherever it was waiting. So a few
// runs are enough, and they come first: a sever of the owner (its step-down, resign or revoke, is what
// waits on the cut network; a waiter's Campaign cleans up after itself
// with the client's own context, so a severed waiter hangs in etcd's
// code, whoever wrote the rest), and a stop of the newcomer and of a
// waiter at their first request (not a stream's answer, which may come
// only once the wait is over), while they still wait their turn. Their
// other cells come last, after every other kind.

// stopWave takes the early runs of the stop's kinds out of rest (depth 1
// after its first tier): the sever of the first site the owner reached
// in the calm run, and the stop of the first request the newcomer and a
// waiter sent.
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
