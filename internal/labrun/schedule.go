package labrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// A lab schedule is a named sequence of faults aimed at whoever leads
// when it begins: the runner's prepared ways to break the learner's code.
// They are the script's faults (ByScript); a learner's own sequence comes
// from a history file as Params.Faults, like any experiment's --faults.
type labSchedule struct {
	says string
	play func(ctx context.Context, lr *labRun, run *experiment.Run, owner *experiment.Replica) error
	// cluster: the schedule moves etcd's raft leader, so the run needs
	// the in-process 3-member cluster (Scenario.NeedsCluster).
	cluster bool
	// waiter: the schedule hits a replica that waits (labRun.waiter)
	// instead of the leader.
	waiter bool
	// byHand: the schedule does nothing of its own and lasts until the
	// learner ends the run (ByHand).
	byHand bool
}

var labSchedules = map[string]*labSchedule{
	"calm": {says: "no faults: the replicas only run", play: func(context.Context, *labRun, *experiment.Run, *experiment.Replica) error { return nil }},
	"pause-owner": {says: "pause the leader past its TTL (2 TTLs + 1 s), then wake it", play: func(ctx context.Context, lr *labRun, run *experiment.Run, o *experiment.Replica) error {
		o.Pause(history.ByScript)
		err := experiment.Sleep(ctx, 2*run.TTLDuration()+time.Second)
		o.Resume(history.ByScript)
		return err
	}},
	"cut-off-owner": {says: "cut the leader's network for 2 TTLs, then heal it", play: func(ctx context.Context, lr *labRun, run *experiment.Run, o *experiment.Replica) error {
		o.Partition(history.ByScript)
		err := experiment.Sleep(ctx, 2*run.TTLDuration())
		o.Heal(history.ByScript)
		return err
	}},
	"crash-owner": {says: "kill the leader's process (its lease is orphaned); after 2 TTLs + 1 s it starts again and joins", play: func(ctx context.Context, lr *labRun, run *experiment.Run, o *experiment.Replica) error {
		o.Crash(history.ByScript)
		if err := experiment.Sleep(ctx, 2*run.TTLDuration()+time.Second); err != nil {
			return err
		}
		return o.Restart(history.ByScript)
	}},
	"crash-during-stepdown": {says: "cut the leader's network and tell it to stop (SIGTERM); kill its process while it steps down (its resign cannot reach etcd), heal; after 2 TTLs + 1 s it starts again", play: crashDuringStepDown},
	"flapping-network":      {says: "five short cuts of the leader's network, each 0.75 to 1.25 TTLs, healed for under a second in between; each aimed at whoever leads then", play: flappingNetwork},
	"cut-off-waiter": {says: "cut the network of a replica that does not lead (r1, once it is back in line) for 2 TTLs, then heal it: its lease runs out while it waits", waiter: true, play: func(ctx context.Context, lr *labRun, run *experiment.Run, w *experiment.Replica) error {
		w.Partition(history.ByScript)
		err := experiment.Sleep(ctx, 2*run.TTLDuration())
		w.Heal(history.ByScript)
		return err
	}},
	"pause-waiter": {says: "pause a replica that does not lead (r1, once it is back in line) past its TTL (2 TTLs + 1 s), then wake it", waiter: true, play: func(ctx context.Context, lr *labRun, run *experiment.Run, w *experiment.Replica) error {
		w.Pause(history.ByScript)
		err := experiment.Sleep(ctx, 2*run.TTLDuration()+time.Second)
		w.Resume(history.ByScript)
		return err
	}},
	"etcd-leader-change": {says: "on a 3-member etcd cluster, move etcd's raft leader to another member three times, a TTL and a half apart", play: etcdLeaderChange, cluster: true},
	ByHand:               {says: "no faults of its own: the replicas run while you break them with the keys (tab picks a replica; p, x, c, r), until you end the run with e (5 minutes at most)", play: byHand, byHand: true},
}

// ByHand is the schedule for faults by hand: it injects none of its
// own and keeps the replicas running until the learner ends the run
// (Spec.End: the lab screen's e, an end line on the run's control
// input), then the run ends as any other (a watch, every replica told to
// stop, the verdict). The learner's faults are in the history, so it
// replays as any learner's schedule, ending after its last fault.
const ByHand = "by-hand"

// ByHandLimit is how long a by-hand run waits to be ended: a run left
// forgotten still ends, and gives its verdict.
const ByHandLimit = 5 * time.Minute

// byHand waits for the learner to end the run, ByHandLimit at most.
func byHand(ctx context.Context, lr *labRun, run *experiment.Run, _ *experiment.Replica) error {
	limit := time.NewTimer(ByHandLimit)
	defer limit.Stop()
	select {
	case <-lr.spec.End:
		run.Note("the run was ended by hand")
	case <-limit.C:
		run.Note("%.0f minutes passed and the run was not ended: it ends by itself", ByHandLimit.Minutes())
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// EndsByHand says whether the prepared schedule lasts until
// the learner ends the run (ByHand) rather than ending by itself.
func EndsByHand(name string) bool {
	s := labSchedules[name]
	return s != nil && s.byHand
}

// crashDuringStepDown catches the leader between its Work returning and
// its resign: with its network cut the resign waits, and the process is
// killed in that wait, its key left to its lease.
func crashDuringStepDown(ctx context.Context, lr *labRun, run *experiment.Run, o *experiment.Replica) error {
	p := lr.proc(o.Name)
	if p == nil {
		return fmt.Errorf("crash-during-stepdown: %s has no process", o.Name)
	}
	o.Partition(history.ByScript)
	lr.tellToStop(o)
	// Its code is now on its way out: a leader's Work returns (it says
	// so), then its resign or revoke waits on the cut network. A lab
	// whose replicas say nothing of stepping down is caught a moment
	// into it all the same.
	select {
	case <-p.down:
	case <-o.Done():
		run.Note("%s's process exited before it could be killed while stepping down", o.Name)
	case <-time.After(250 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := experiment.Sleep(ctx, 100*time.Millisecond); err != nil {
		return err
	}
	p.killNow()
	o.Crash(history.ByScript)
	o.Heal(history.ByScript)
	if err := experiment.Sleep(ctx, 2*run.TTLDuration()+time.Second); err != nil {
		return err
	}
	return o.Restart(history.ByScript)
}

// tellToStop cancels one replica's Run as a shutdown would (SIGTERM to
// its process), mid-run.
func (lr *labRun) tellToStop(r *experiment.Replica) {
	r.Emit(history.Event{Kind: history.Note, Text: "told to stop: SIGTERM, its Run's context is cancelled", Facts: &history.Facts{Op: labStopOp, Succeeded: true}})
	r.Cancel()
}

// flappingNetwork cuts the leader's network for about a TTL, five times:
// some cuts end just before its lease runs out, some just after.
func flappingNetwork(ctx context.Context, lr *labRun, run *experiment.Run, o *experiment.Replica) error {
	ttl := run.TTLDuration()
	for i := range 5 {
		cut := ttl*3/4 + time.Duration(run.Intn(int(ttl/(2*time.Millisecond))+1))*time.Millisecond
		o.Partition(history.ByScript)
		err := experiment.Sleep(ctx, cut)
		o.Heal(history.ByScript)
		if err != nil {
			return err
		}
		if err := experiment.Sleep(ctx, 300*time.Millisecond+time.Duration(run.Intn(500))*time.Millisecond); err != nil {
			return err
		}
		if i < 4 {
			if next := lr.owner(ctx, run, ttl+2*time.Second); next != nil {
				o = next
			}
		}
	}
	return nil
}

// etcdLeaderChange moves the raft leader of the run's 3-member cluster
// on, three times: leases survive it (the new leader renews them all),
// the replicas' clients see errors and retries.
func etcdLeaderChange(ctx context.Context, lr *labRun, run *experiment.Run, o *experiment.Replica) error {
	cl := run.Cluster()
	if cl == nil {
		return errors.New("etcd-leader-change: the run has no in-process cluster")
	}
	for range 3 {
		lead, err := cl.Leader()
		if err != nil {
			return fmt.Errorf("etcd-leader-change: %w", err)
		}
		if err := run.MoveLeader(ctx, lead, (lead+1)%len(cl.Members())); err != nil {
			return err
		}
		if err := experiment.Sleep(ctx, run.TTLDuration()*3/2); err != nil {
			return err
		}
	}
	return nil
}

// scheduleNeedsCluster says whether the prepared schedule moves etcd's
// raft leader, which only the in-process cluster allows.
func scheduleNeedsCluster(name string) bool {
	s := labSchedules[name]
	return s != nil && s.cluster
}

// labScheduleOrder is the order the schedules are offered in: the
// simplest faults first, then the run with the learner's faults only,
// the run without any last.
var labScheduleOrder = []string{"pause-owner", "cut-off-owner", "crash-owner", "crash-during-stepdown", "flapping-network", "cut-off-waiter", "pause-waiter", "etcd-leader-change", ByHand, "calm"}

// ScheduleNames lists the prepared schedules of lab runs, in the order
// they are offered.
func ScheduleNames() []string {
	out := slices.Clone(labScheduleOrder)
	var more []string
	for n := range labSchedules {
		if !slices.Contains(out, n) {
			more = append(more, n)
		}
	}
	slices.Sort(more)
	return append(out, more...)
}

// ScheduleSays says in a line what a prepared schedule does ("" if none).
func ScheduleSays(name string) string {
	if s := labSchedules[name]; s != nil {
		return s.says
	}
	return ""
}

// playSchedule runs the named schedule on the leader of the moment, or
// waits out a learner's schedule (Params.Faults, injected beside the
// script by injectSchedule at the step they came in).
func (lr *labRun) playSchedule(ctx context.Context, run *experiment.Run) error {
	if all := append(slices.Clone(run.Params.Faults), lr.faults...); len(all) > 0 {
		run.Phase(ctx, fmt.Sprintf("your schedule: %d faults", len(all)))
		last := time.Duration(0)
		for _, f := range all {
			last = max(last, f.After)
		}
		return experiment.Sleep(ctx, last+time.Second)
	}
	name := lr.spec.Schedule
	if name == "" {
		name = "calm"
	}
	if len(lr.armed) > 0 && name == "calm" {
		return lr.awaitArmed(ctx, run)
	}
	s := labSchedules[name]
	if s.byHand {
		// Nothing aimed at a leader: the learner picks the replicas.
		run.Phase(ctx, fmt.Sprintf("schedule %s: no faults but yours; the run goes on until you end it (e on the lab screen, an end line on --control's input), %.0f minutes at most", name, ByHandLimit.Minutes()))
		return s.play(ctx, lr, run, nil)
	}
	o := lr.owner(ctx, run, 10*time.Second+run.TTLDuration())
	if o == nil {
		run.Phase(ctx, fmt.Sprintf("schedule %s: skipped, no replica leads", name))
		return ctx.Err()
	}
	if !s.waiter {
		run.Phase(ctx, fmt.Sprintf("schedule %s on the leader %s: %s", name, o.Name, s.says))
		return s.play(ctx, lr, run, o)
	}
	w := lr.waiter(ctx, run)
	if w == nil {
		run.Phase(ctx, fmt.Sprintf("schedule %s: skipped, no replica waits", name))
		return ctx.Err()
	}
	run.Phase(ctx, fmt.Sprintf("schedule %s on %s, which does not lead: %s", name, w.Name, s.says))
	return s.play(ctx, lr, run, w)
}

// labBackInLine is how long after a replica lets go of the lock it is
// taken to be waiting again: past a holder's rest before it joins the
// line once more (100 ms in the lock labs' replicas).
const labBackInLine = 250 * time.Millisecond

// waiter picks a waiter schedule's target: r1, once it waits in line by
// its lab's own account (Lab.inLine), or else once it has neither
// led nor been down for a moment (lab 08's r1 is the patient waiter); if
// r1 does not for 2 TTLs (an elected leader keeps its term), the last
// replica that does not lead.
func (lr *labRun) waiter(ctx context.Context, run *experiment.Run) *experiment.Replica {
	rs := run.Replicas()
	if len(rs) == 0 {
		return nil
	}
	var since time.Time // since when r1 has not led
	inLine := func() bool {
		if lr.lab.inLine != nil {
			h := run.History()
			return lr.lab.inLine(h.Events, rs[0].Name)
		}
		if st := rs[0].State(); st.Role == experiment.RoleOwner || st.Paused || st.Crashed {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) >= labBackInLine
	}
	if experiment.WaitFor(ctx, 2*run.TTLDuration(), inLine) {
		return rs[0]
	}
	lead := lr.owner(ctx, run, 0)
	for i := len(rs) - 1; i >= 0; i-- {
		if st := rs[i].State(); rs[i] != lead && !st.Paused && !st.Crashed {
			return rs[i]
		}
	}
	return nil
}

// ToldToStop is a step of a lab run's fault schedule that no key does: a
// replica's code told to stop mid-run, as a shutdown would
// (crash-during-stepdown). The history has it as a note whose Facts.Op
// is labStopOp.
const ToldToStop history.Kind = "told-to-stop"

const labStopOp = "told-to-stop"

// FaultSchedule is the fault schedule of a lab run's history: every
// fault done to a replica, the script's and the learner's alike (a lab
// run's named schedule is the script's), each time a replica was told to
// stop (ToldToStop), and each move of etcd's raft leader (LeaderMoved,
// its Replica the member that took over), anchored to its step. Replayed
// with Params.Faults, the faults hit the replicas and members of the
// same names.
func FaultSchedule(h *history.History) []history.ScheduledFault {
	stepAt := map[int]time.Duration{}
	var out []history.ScheduledFault
	armed := armedIn(h)
	for i, e := range h.Events {
		if e.Kind == history.Phase {
			stepAt[e.Step] = e.At
		}
		kind := e.Kind
		switch {
		case e.Facts != nil && e.Facts.Request != nil:
			// A request fault's own events: replayed by what it aimed at.
			if e.Facts.Op == history.OpArmed {
				f := *e.Facts.Request
				out = append(out, history.ScheduledFault{Kind: RequestArmed, Replica: f.Replica, Request: &f})
			}
			continue
		case armed && e.Origin == history.ByScript:
			// What the faults at requests did (a cut, a move of etcd's
			// leader) comes again from them, not at its moment.
			continue
		case e.Kind == history.Note && e.Facts != nil && e.Facts.Op == labStopOp:
			kind = ToldToStop
		case e.Kind == history.LeaderMoved:
		case !e.Kind.IsFault() || e.Origin == "" || e.Kind.IsEtcdFault():
			continue
		}
		if e.Replica != "" {
			f := history.ScheduledFault{Step: e.Step, After: e.At - stepAt[e.Step], Kind: kind, Replica: e.Replica, Value: e.Value}
			if kind != history.LeaderMoved {
				// A replica's fault, aimed by role on a replay (a leader
				// move names an etcd member).
				f.Role = roleAt(h, e.Replica, i)
			}
			out = append(out, f)
		}
	}
	return out
}

// armedIn says whether a history armed request faults.
func armedIn(h *history.History) bool {
	for _, e := range h.Events {
		if e.Facts != nil && e.Facts.Op == history.OpArmed && e.Facts.Request != nil {
			return true
		}
	}
	return false
}

// NeedsCluster says whether a lab run on the named schedule, or with
// faults replayed from a history, needs the in-process 3-member cluster:
// the schedule or the faults move etcd's raft leader, which only that
// cluster allows. Start and the command line's choice of etcd both ask
// it, so the two never disagree.
func NeedsCluster(schedule string, faults []history.ScheduledFault) bool {
	return scheduleNeedsCluster(schedule) || faultsNeedCluster(faults)
}

// faultsNeedCluster says whether a lab run's fault schedule moves
// etcd's raft leader, which only the in-process cluster allows.
func faultsNeedCluster(faults []history.ScheduledFault) bool {
	for _, f := range faults {
		if f.Kind == history.LeaderMoved || (f.Request != nil && f.Request.Fault == history.LeaderAfter) {
			return true
		}
	}
	return false
}

// labOwnFaults: a replayed schedule with steps only a lab run can play
// (a replica told to stop, etcd's leader moved, a fault aimed by role:
// explore_byrole.go) is the lab run's to play,
// all of it, so that its steps keep their order (crash-during-stepdown
// cuts the network, then tells the replica to stop, at the same
// instant); any other the run's injectSchedule plays as the learner's
// keys would.
func labOwnFaults(faults []history.ScheduledFault) (own, rest []history.ScheduledFault) {
	for _, f := range faults {
		if f.Kind == ToldToStop || f.Kind == history.LeaderMoved || f.Role != "" {
			return faults, nil
		}
	}
	return nil, faults
}

// injectOwn plays a replayed schedule that has lab run steps, each
// After into its Step, in order.
func (lr *labRun) injectOwn(ctx context.Context, run *experiment.Run) {
	stopped := map[string]bool{}
	cast := casting{}
	for _, f := range lr.faults {
		if !run.WaitStep(ctx, f.Step) || experiment.Sleep(ctx, f.After-run.SinceStep()) != nil {
			return
		}
		f.Replica = cast.aim(ctx, lr, run, f)
		if err := lr.playOwn(ctx, run, f, stopped); err != nil {
			run.Note("the schedule's %s of %s in step %d: %v", f.Kind, f.Replica, f.Step, err)
		}
	}
}

// playOwn plays one step of the schedule as the prepared schedule that
// recorded it did; stopped are the replicas told to stop so far.
func (lr *labRun) playOwn(ctx context.Context, run *experiment.Run, f history.ScheduledFault, stopped map[string]bool) error {
	if f.Kind == history.LeaderMoved {
		return lr.moveLeaderTo(ctx, run, f.Replica)
	}
	r := run.AwaitReplica(ctx, f.Replica)
	if r == nil {
		return errors.New("no replica of that name by then")
	}
	switch {
	case f.Kind == ToldToStop:
		stopped[r.Name] = true
		lr.tellToStop(r)
	case f.Kind == history.Crashed && stopped[r.Name]:
		// The kill of a replica told to stop: at once, in its shutdown.
		if p := lr.proc(r.Name); p != nil {
			p.killNow()
		}
		r.Crash(history.ByLearner)
	default:
		if f.Kind == history.Restarted {
			delete(stopped, r.Name)
		}
		return experiment.ApplyFault(r, f)
	}
	return nil
}

// moveLeaderTo moves etcd's raft leader to the member named name.
func (lr *labRun) moveLeaderTo(ctx context.Context, run *experiment.Run, name string) error {
	cl := run.Cluster()
	if cl == nil {
		return errors.New("the run has no in-process cluster")
	}
	lead, err := cl.Leader()
	if err != nil {
		return err
	}
	for i, m := range cl.Members() {
		if m.Name == name && i != lead {
			return run.MoveLeader(ctx, lead, i)
		}
		if m.Name == name {
			run.Note("%s leads etcd already: no move", name)
			return nil
		}
	}
	return fmt.Errorf("no etcd member %s", name)
}
