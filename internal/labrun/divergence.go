package labrun

import (
	"fmt"

	"github.com/ownership-election/playground/internal/history"
)

// Where two runs on the same faults first differ, the learner's and the
// reference's: their replicas matched by role, not by name (the run's
// first owner with the other's first owner, whatever each is called),
// their steps compared as role and kind of event, and the rule the event
// broke if it broke one, each stretch of one replica's same event
// counted once.

// Divergence is the first step at which two runs differ.
type Divergence struct {
	// Index is the step's place in both runs' steps (from 0).
	Index int
	// Mine and Theirs are the two events (Theirs' zero Kind: the
	// reference's run had no more steps; the same for Mine).
	Mine, Theirs history.Event
	// MineRole and TheirsRole are the roles the two replicas play
	// ("owner 1", "waiter 2"), and the texts say each step in a line.
	MineRole, TheirsRole string
	MineText, TheirsText string
}

// divergenceKinds are the events compared: what the lab's code did and
// what was done to it; a stretch of one replica's same event (a turn's
// writes, their number being timing) counts once.
var divergenceKinds = map[history.Kind]bool{
	history.Acquired: true, history.Released: true, history.SteppedDown: true, history.Lost: true,
	history.WriteAccepted: true, history.WriteRejected: true, history.LeaseExpired: true, history.Crashed: true, history.Restarted: true,
	history.Paused: true, history.Resumed: true, history.Partitioned: true, history.Healed: true,
	history.RequestFailed: true, history.AnswerLost: true, history.RequestHeld: true, ReplicaFailed: true,
	history.RequestsRefused: true, history.LeaseRevoked: true,
}

// Roles names each replica of a run by the part it played: "owner 1"
// for the first to own, "owner 2" for the next, "newcomer" for the
// replica that joined late and never owned, then "waiter 1"... for the
// others that never did, in the order they first appear.
func Roles(h *history.History) map[string]string {
	roles := map[string]string{}
	owners, order := 0, []string{}
	seen := map[string]bool{}
	for _, e := range h.Events {
		if e.Replica == "" || e.Kind.IsEtcdFault() {
			continue
		}
		if !seen[e.Replica] {
			seen[e.Replica] = true
			order = append(order, e.Replica)
		}
		if e.Kind == history.Acquired && roles[e.Replica] == "" {
			owners++
			roles[e.Replica] = fmt.Sprintf("owner %d", owners)
		}
	}
	for _, e := range h.Events {
		// The replica that joined late, if it never owned.
		if e.Kind == history.Note && e.Facts != nil && e.Facts.Op == OpNewcomer && roles[e.Replica] == "" {
			roles[e.Replica] = "newcomer"
		}
	}
	waiters := 0
	for _, r := range order {
		if roles[r] == "" {
			waiters++
			roles[r] = fmt.Sprintf("waiter %d", waiters)
		}
	}
	return roles
}

type step struct {
	role string
	e    history.Event
	// broke names the rule this event broke, by its run's verdict ("" if
	// none): a stale write etcd took is a write-accepted as a write
	// made in time is, and differs from it all the same.
	broke string
}

// steps are a run's compared events, with their replicas' roles.
func steps(h *history.History) []step {
	roles := Roles(h)
	broke := brokeBy(h)
	var out []step
	for _, e := range h.Events {
		if !divergenceKinds[e.Kind] || e.Replica == "" || e.Kind.IsEtcdFault() {
			continue
		}
		s := step{role: roles[e.Replica], e: e, broke: broke[eventKey(e)]}
		if n := len(out); n > 0 && out[n-1].role == s.role && out[n-1].e.Kind == e.Kind && out[n-1].broke == s.broke {
			continue
		}
		out = append(out, s)
	}
	return out
}

// brokeBy maps the events a run's failed findings rest on to the name
// of the rule each broke.
func brokeBy(h *history.History) map[string]string {
	out := map[string]string{}
	if h.Verdict == nil {
		return out
	}
	for _, f := range failed(*h.Verdict) {
		for _, e := range f.Events {
			if _, ok := out[eventKey(e)]; !ok {
				out[eventKey(e)] = findingName(f)
			}
		}
	}
	return out
}

// eventKey tells an event from a copy of another: its time, replica
// and kind.
func eventKey(e history.Event) string {
	return fmt.Sprintf("%d %s %s", e.At, e.Replica, e.Kind)
}

// FirstDivergence compares two runs, mine and the reference's (theirs):
// false when their steps are the same all through.
func FirstDivergence(mine, theirs *history.History) (Divergence, bool) {
	if mine == nil || theirs == nil || len(theirs.Events) == 0 {
		return Divergence{}, false
	}
	a, b := steps(mine), steps(theirs)
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y step
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x.role == y.role && x.e.Kind == y.e.Kind && x.broke == y.broke {
			continue
		}
		return Divergence{Index: i, Mine: x.e, Theirs: y.e, MineRole: x.role, TheirsRole: y.role,
			MineText: stepText(x), TheirsText: stepText(y)}, true
	}
	return Divergence{}, false
}

// stepText says a step in a line: the rule it broke comes before the
// event's own text, which is long and alike in both runs (a screen
// that shows a line's start shows where the two differ).
func stepText(s step) string {
	if s.e.Kind == "" {
		return "(no more steps)"
	}
	broke := ""
	if s.broke != "" {
		broke = ", broke " + s.broke
	}
	return fmt.Sprintf("%.2fs %s (%s) %s%s: %s", s.e.At.Seconds(), s.role, s.e.Replica, s.e.Kind, broke, s.e.Text)
}
