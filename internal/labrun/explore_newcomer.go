package labrun

import (
	"context"
	"fmt"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// The newcomer: in a run that explores (a calm run recording call sites,
// or any run with request faults, a replayed faults file included) one
// more replica joins once the others are under way. Some bugs need a
// change in the middle of a step (a member joining between a worker's
// read of the group and the watch it opens after it): the newcomer is
// that change. It joins as soon as a fault aimed at another replica
// fires, inside the window the fault opens; without such a fault (a
// calm run, or faults aimed at the newcomer itself) it joins as soon as
// a replica leads. Until it first owns, its requests are in the role
// "newcomer", so the calm run records its call sites apart and the plan
// aims faults at them.

// OpNewcomer is the Facts.Op of the note that says a replica joined the
// run late (Roles calls it the newcomer).
const OpNewcomer = "newcomer"

// newcomerWait bounds how long the newcomer waits for a fault to fire
// before it joins anyway.
const newcomerWait = armedWait

// exploring says whether the run has a newcomer.
func (lr *labRun) exploring() bool { return lr.spec.Sites || len(lr.armed) > 0 }

// newcomerName is the late replica's name: the one after the run's own.
func (lr *labRun) newcomerName() string {
	return fmt.Sprintf("r%d", lr.run.Params.Replicas+1)
}

// isNewcomer says whether name is the run's late replica.
func (lr *labRun) isNewcomer(name string) bool { return lr.exploring() && name == lr.newcomerName() }

// letNewcomerIn lets the newcomer join now.
func (lr *labRun) letNewcomerIn() { lr.newcomerOnce.Do(func() { close(lr.newcomer) }) }

// waitsForFault says whether the newcomer joins at a fault: one of the
// armed faults is aimed at another replica. The end of a lease is not
// waited for: the change it brings is its own (the keys it held go to
// the others), and a site reached in the calm run only once the
// newcomer was in (a worker giving shards back to it) must be reached
// again before the fault can fire there.
func (lr *labRun) waitsForFault() bool {
	for _, f := range lr.armed {
		if f.Fault == history.RevokeLease {
			continue
		}
		if f.Role != replica.RoleNewcomer && (f.Replica == "" || f.Replica != lr.newcomerName()) {
			return true
		}
	}
	return false
}

// joinLate starts the newcomer when its time comes (in the background:
// the schedule goes on meanwhile); the channel is closed once it has
// started, or at once in a run without one.
func (lr *labRun) joinLate(ctx context.Context, run *experiment.Run) <-chan struct{} {
	joined := make(chan struct{})
	if !lr.exploring() {
		close(joined)
		return joined
	}
	if !lr.waitsForFault() {
		lr.letNewcomerIn()
	}
	go func() {
		defer close(joined)
		select {
		case <-lr.newcomer:
		case <-time.After(newcomerWait + run.TTLDuration()):
		case <-ctx.Done():
			return
		}
		name := lr.newcomerName()
		r, err := run.NewReplica(name)
		if err != nil {
			run.Note("the newcomer %s could not join: %v", name, err)
			return
		}
		r.Emit(history.Event{Kind: history.Note, Text: "a newcomer: it joins the run under way",
			Facts: &history.Facts{Op: OpNewcomer, Succeeded: true}})
		if err := r.Start(lr.body); err != nil {
			run.Note("the newcomer %s could not start: %v", name, err)
		}
	}()
	return joined
}
