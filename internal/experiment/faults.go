package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/history"
)

// StopMember stops an etcd member of the in-process cluster, as a fault
// of the script's, recorded in the history.
func (run *Run) StopMember(m *embedetcd.Member) error {
	if err := m.Stop(); err != nil {
		return fmt.Errorf("stop member %s: %w", m.Name, err)
	}
	run.Emit(history.Event{Kind: history.MemberStopped, Replica: m.Name, Origin: history.ByScript, Text: "etcd member " + m.Name + " stopped"})
	return nil
}

// RestartMember starts a stopped member again.
func (run *Run) RestartMember(ctx context.Context, m *embedetcd.Member) error {
	if err := m.Restart(ctx); err != nil {
		return fmt.Errorf("restart member %s: %w", m.Name, err)
	}
	run.Emit(history.Event{Kind: history.MemberRestarted, Replica: m.Name, Origin: history.ByScript, Text: "etcd member " + m.Name + " running again"})
	return nil
}

// MoveLeader hands raft leadership from member from to member to.
func (run *Run) MoveLeader(ctx context.Context, from, to int) error {
	members := run.cluster.Members()
	if err := run.cluster.MoveLeader(ctx, to); err != nil {
		return fmt.Errorf("move the raft leader to %s: %w", members[to].Name, err)
	}
	run.Emit(history.Event{Kind: history.LeaderMoved, Replica: members[to].Name, Origin: history.ByScript,
		Text: fmt.Sprintf("raft leadership moved from %s to %s", members[from].Name, members[to].Name)})
	return nil
}

// injectSchedule plays a learner's fault schedule (Params.Faults) again:
// each fault After into its Step, on the replica of that name, through
// the same calls the learner's keys make. It runs beside the script
// until the run ends.
func (run *Run) injectSchedule(ctx context.Context) {
	for _, f := range run.Params.Faults {
		if !run.WaitStep(ctx, f.Step) {
			return
		}
		if Sleep(ctx, f.After-run.SinceStep()) != nil {
			return
		}
		r := run.AwaitReplica(ctx, f.Replica)
		if r == nil {
			run.Note("the schedule's %s of %s in step %d is skipped: no replica of that name by then", f.Kind, f.Replica, f.Step)
			continue
		}
		if err := ApplyFault(r, f); err != nil {
			run.Note("the schedule's %s of %s: %v", f.Kind, f.Replica, err)
		}
	}
}

// ApplyFault does what the learner's key for f.Kind does.
func ApplyFault(r *Replica, f history.ScheduledFault) error {
	switch f.Kind {
	case history.Paused:
		r.Pause(history.ByLearner)
	case history.Resumed:
		r.Resume(history.ByLearner)
	case history.Partitioned:
		r.Partition(history.ByLearner)
	case history.Healed:
		r.Heal(history.ByLearner)
	case history.Crashed:
		r.Crash(history.ByLearner)
	case history.Restarted:
		return r.Restart(history.ByLearner)
	case history.ClockChanged:
		r.SetClockRate(f.Value, history.ByLearner)
	default:
		return fmt.Errorf("a learner cannot inject %s", f.Kind)
	}
	return nil
}

// WaitStep waits until the script has reached step n (or gone past it).
func (run *Run) WaitStep(ctx context.Context, n int) bool {
	return WaitFor(ctx, 24*time.Hour, func() bool {
		run.mu.Lock()
		defer run.mu.Unlock()
		return run.step >= n
	})
}

// SinceStep is the time since the current step began.
func (run *Run) SinceStep() time.Duration {
	run.mu.Lock()
	defer run.mu.Unlock()
	for i := len(run.events) - 1; i >= 0; i-- {
		if run.events[i].Kind == history.Phase {
			return time.Since(run.start) - run.events[i].At
		}
	}
	return time.Since(run.start)
}

// AwaitReplica returns the replica named name, waiting a little for a
// script that creates it later in the step.
func (run *Run) AwaitReplica(ctx context.Context, name string) *Replica {
	var r *Replica
	WaitFor(ctx, 5*time.Second, func() bool { r = run.Replica(name); return r != nil })
	return r
}
