package labrun

import (
	"context"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// Faults replayed by role: the faults a learner put on their own run by
// hand (or a schedule's, recorded) hit replicas by name, but "r1" is the
// owner in one run and a waiter in the other. FaultSchedule records the
// role each replica played when a fault hit it; a replay aims the first
// fault at a name at the replica that plays that role then, and every
// later fault at that name (its wake-up, its heal, its restart) at the
// same one. So "on the same faults" sets owner beside owner and waiter
// beside waiter.

// roleAt is the role the replica name played just before h's event i:
// "owner" while it holds the lock, leads or owns a shard by its own
// events, else "waiter".
func roleAt(h *history.History, name string, i int) string {
	owner, shards := false, 0
	for _, e := range h.Events[:i] {
		if e.Replica != name {
			continue
		}
		switch {
		case e.Kind == history.Acquired:
			owner = true
		case e.Kind == history.SteppedDown || e.Kind == history.Lost || e.Kind == history.Released || e.Kind == history.Crashed:
			owner, shards = false, 0
		case e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "own":
			shards++
		case e.Kind == history.Note && e.Facts != nil && e.Facts.Op == "disown":
			shards = max(0, shards-1)
		}
	}
	if owner || shards > 0 {
		return "owner"
	}
	return "waiter"
}

// casting maps the recorded run's replica names to this run's.
type casting map[string]string

// aim is the replica of this run that f hits: the one it hit before,
// else the one playing f's role now (the owner, or a replica that does
// not lead and is not cast yet), else the same name.
func (c casting) aim(ctx context.Context, lr *labRun, run *experiment.Run, f history.ScheduledFault) string {
	if f.Role == "" || f.Replica == "" {
		return f.Replica
	}
	if to, ok := c[f.Replica]; ok {
		return to
	}
	taken := map[string]bool{}
	for _, to := range c {
		taken[to] = true
	}
	to := ""
	if o := lr.owner(ctx, run, time.Second); f.Role == "owner" && o != nil && !taken[o.Name] {
		to = o.Name
	}
	if f.Role != "owner" {
		// The same name when it waits here too, else the first that does.
		waits := func(r *experiment.Replica) bool {
			st := r.State()
			return !taken[r.Name] && st.Role != experiment.RoleOwner && !st.Crashed && !lr.isNewcomer(r.Name)
		}
		if r := run.Replica(f.Replica); r != nil && waits(r) {
			to = r.Name
		}
		for _, r := range run.Replicas() {
			if to == "" && waits(r) {
				to = r.Name
			}
		}
	}
	if to == "" {
		to = f.Replica
	}
	c[f.Replica] = to
	if to != f.Replica {
		run.Note("the recorded %s's faults (the %s when first hit) go to %s, the %s here", f.Replica, f.Role, to, f.Role)
	}
	return to
}
