package experiment

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// A lab schedule is a named sequence of faults aimed at whoever leads
// when it begins: the runner's prepared ways to break the learner's code.
// They are the script's faults (ByScript); a learner's own sequence comes
// from a history file as Params.Faults, like any experiment's --faults.
type labSchedule struct {
	says string
	play func(ctx context.Context, lr *labRun, run *Run, owner *Replica) error
}

var labSchedules = map[string]*labSchedule{
	"calm": {says: "no faults: the replicas only run", play: func(context.Context, *labRun, *Run, *Replica) error { return nil }},
	"pause-owner": {says: "pause the leader past its TTL (2 TTLs + 1 s), then wake it", play: func(ctx context.Context, lr *labRun, run *Run, o *Replica) error {
		o.pause(ByScript)
		err := sleep(ctx, 2*run.tTLDuration()+time.Second)
		o.resume(ByScript)
		return err
	}},
	"cut-off-owner": {says: "cut the leader's network for 2 TTLs, then heal it", play: func(ctx context.Context, lr *labRun, run *Run, o *Replica) error {
		o.partition(ByScript)
		err := sleep(ctx, 2*run.tTLDuration())
		o.heal(ByScript)
		return err
	}},
	"crash-owner": {says: "kill the leader's process (its lease is orphaned); after 2 TTLs + 1 s it starts again and joins", play: func(ctx context.Context, lr *labRun, run *Run, o *Replica) error {
		o.crash(ByScript)
		if err := sleep(ctx, 2*run.tTLDuration()+time.Second); err != nil {
			return err
		}
		return o.restart(ByScript)
	}},
}

// LabScheduleNames lists the prepared schedules of lab runs.
func LabScheduleNames() []string {
	out := make([]string, 0, len(labSchedules))
	for n := range labSchedules {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// LabScheduleSays says in a line what a prepared schedule does ("" if none).
func LabScheduleSays(name string) string {
	if s := labSchedules[name]; s != nil {
		return s.says
	}
	return ""
}

// playSchedule runs the named schedule on the leader of the moment, or
// waits out a learner's schedule (Params.Faults, injected beside the
// script by injectSchedule at the step they came in).
func (lr *labRun) playSchedule(ctx context.Context, run *Run) error {
	if len(run.Params.Faults) > 0 {
		run.Phase(ctx, fmt.Sprintf("your schedule: %d faults", len(run.Params.Faults)))
		last := time.Duration(0)
		for _, f := range run.Params.Faults {
			last = max(last, f.After)
		}
		return sleep(ctx, last+time.Second)
	}
	name := lr.spec.Schedule
	if name == "" {
		name = "calm"
	}
	s := labSchedules[name]
	o := lr.owner(ctx, run, 10*time.Second+run.tTLDuration())
	if o == nil {
		run.Phase(ctx, fmt.Sprintf("schedule %s: skipped, no replica leads", name))
		return ctx.Err()
	}
	run.Phase(ctx, fmt.Sprintf("schedule %s on the leader %s: %s", name, o.Name, s.says))
	return s.play(ctx, lr, run, o)
}

// LabFaultSchedule is the fault schedule of a lab run's history: every
// fault done to a replica, the script's and the learner's alike (a lab
// run's named schedule is the script's), anchored to its step. Replayed
// with Params.Faults, the faults hit the replicas of the same names.
func LabFaultSchedule(h *History) []ScheduledFault {
	stepAt := map[int]time.Duration{}
	var out []ScheduledFault
	for _, e := range h.Events {
		if e.Kind == Phase {
			stepAt[e.Step] = e.At
		}
		if e.Kind.IsFault() && e.Origin != "" && e.Replica != "" {
			out = append(out, ScheduledFault{Step: e.Step, After: e.At - stepAt[e.Step], Kind: e.Kind, Replica: e.Replica, Value: e.Value})
		}
	}
	return out
}
