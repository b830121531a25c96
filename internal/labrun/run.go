package labrun

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// Your own code as the replicas: a lab run is a run whose replicas are
// child processes, each one copy of the learner's lab code (built by
// internal/labrun), each with its own fault proxies in front of etcd. The
// parent keeps everything else a run has: the etcd, the key watch, the
// fenced resource, the faults, the history and the checker. A child
// reports what the lab's code did as History events on its standard
// output (process.go), and asks the resource for its writes there.

// The events only lab runs record.
const (
	// ReplicaFailed: a replica's code failed on its own (it panicked,
	// hung when stopped, returned before it was stopped, or is not
	// written yet). Text says how, from what its process said.
	ReplicaFailed history.Kind = "replica-failed"
)

// ErrClock: a schedule asked a lab run to change a replica's clock.
var ErrClock = errors.New("a lab run cannot change a replica's clock: its process reads the operating system's clock (the lab's timers and etcd's client alike), which the playground has no way to slow")

// ReplicaConfig is what a replica process is told: its name, its own fault
// proxies, the namespace every key goes under and the lab's prefix in it.
type ReplicaConfig struct {
	Name      string
	Endpoints []string
	Namespace string
	Prefix    string
	TTL       int64
	// Faults are the request faults armed in it (-faults, JSON; "" for
	// none), Sites whether it reports the call sites it reaches, and
	// CallTimeout its bound on its own calls (0: its default).
	Faults      string
	Sites       bool
	CallTimeout time.Duration
	// Newcomer: it joins the run late (-newcomer; explore_newcomer.go).
	Newcomer bool
	// StuckAfter: once told to stop, it says after this long where its
	// code stands (-stuck-after), which a report of a hang quotes.
	StuckAfter time.Duration
}

// Spec says which lab to run as the replicas and how.
type Spec struct {
	// Lab is the lab's id ("07_election"); the run's scenario is
	// ScenarioName(Lab).
	Lab string
	// Who says whose code runs, for the history ("your code", "the
	// reference solution").
	Who string
	// Command makes the (unstarted) command of one replica process.
	Command func(r ReplicaConfig) *exec.Cmd
	// Schedule is a named schedule (ScheduleNames); "" with Params.Faults
	// (a learner's schedule read from a history) or for a calm run.
	Schedule string
	// End is closed when the learner ends a run of the schedule ByHand,
	// which waits for it (ByHandLimit at most); that schedule needs it.
	End <-chan struct{}
	// Sites makes every replica report each call site of the lab's code
	// the first time it reaches it in a role (exploration's calm run).
	Sites bool
}

// Start begins a run of the lab's own code as the replicas.
func Start(ctx context.Context, spec Spec, p history.Params, env experiment.Env, sink func(history.Event)) (*experiment.Run, error) {
	lab, ok := byID(spec.Lab)
	if !ok {
		return nil, fmt.Errorf("%w: lab %q has no runner", experiment.ErrUnknown, spec.Lab)
	}
	if spec.Schedule != "" && labSchedules[spec.Schedule] == nil {
		return nil, fmt.Errorf("%w: no schedule %q (%s)", experiment.ErrUnknown, spec.Schedule, strings.Join(ScheduleNames(), ", "))
	}
	if EndsByHand(spec.Schedule) && spec.End == nil {
		return nil, fmt.Errorf("schedule %s: the run ends by hand, and nothing can end it (Spec.End)", spec.Schedule)
	}
	for _, f := range p.Faults {
		if f.Kind == history.ClockChanged {
			return nil, ErrClock
		}
	}
	sc := *lab.scenario
	sc.NeedsCluster = NeedsCluster(spec.Schedule, p.Faults)
	armed, timed := splitRequestFaults(p.Faults)
	own, rest := labOwnFaults(timed)
	p.Faults = rest
	lr := &labRun{spec: spec, lab: lab, faults: own, armed: armed, claimed: map[int]bool{}, newcomer: make(chan struct{}), running: map[string]bool{}, notWritten: map[string]bool{}, procs: map[string]*labProc{}}
	sc.Run = lr.script
	return experiment.Start(ctx, &sc, p, env, sink)
}

// labRun is the state of one lab run's script.
type labRun struct {
	spec Spec
	lab  Lab
	run  *experiment.Run
	// faults are the steps of a replayed schedule only a lab run plays
	// (labOwnFaults); Params.Faults keeps the rest.
	faults []history.ScheduledFault
	// armed are the request faults armed in the replicas; claimed says
	// which have fired (each fires once in a run).
	armed []history.RequestFault

	// newcomer is closed when the late replica may join (newcomerAt).
	newcomer     chan struct{}
	newcomerOnce sync.Once

	mu         sync.Mutex
	claimed    map[int]bool
	running    map[string]bool     // replicas whose process said it runs the lab's code
	notWritten map[string]bool     // ... and then that the lab is not written yet
	procs      map[string]*labProc // each replica's current process

	// toldToStop are the replicas a stop fault told to stop mid-run
	// (request_stop.go); mu guards it too.
	toldToStop []*experiment.Replica
}

func (lr *labRun) markNotWritten(name string) {
	lr.mu.Lock()
	lr.notWritten[name] = true
	lr.mu.Unlock()
}

func (lr *labRun) noneWritten(n int) bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return len(lr.notWritten) >= n
}

func (lr *labRun) setProc(name string, p *labProc) {
	lr.mu.Lock()
	lr.procs[name] = p
	lr.mu.Unlock()
}

func (lr *labRun) proc(name string) *labProc {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.procs[name]
}

func (lr *labRun) markRunning(name string) {
	lr.mu.Lock()
	lr.running[name] = true
	lr.mu.Unlock()
}

// startedWait bounds how long a replica waits for the one before it to
// run the lab's code (a process that fails first says so sooner).
const startedWait = 5 * time.Second

// waitStarted waits until the replica name runs the lab's code (or said
// it is not written). Runs that explore start their replicas one after
// another so: a fault names its target by role and occurrence (the
// waiter's 1st Range), and replicas started at once race to send it
// first (which one becomes the owner is then a coin toss), so that a
// saved run would hit one replica in one replay and another in the next.
// The head start is a process's start, a few milliseconds: the replicas
// still contend for the first turn.
func (lr *labRun) waitStarted(ctx context.Context, name string) {
	experiment.WaitFor(ctx, startedWait, func() bool {
		lr.mu.Lock()
		defer lr.mu.Unlock()
		return lr.running[name] || lr.notWritten[name]
	})
}

func (lr *labRun) allRunning(n int) bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return len(lr.running) >= n
}

// script starts the replicas, waits for a first leader, plays the
// schedule, watches a while and stops every replica as a shutdown would.
func (lr *labRun) script(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	lr.run = run
	n := run.Params.Replicas
	run.Phase(ctx, fmt.Sprintf("start %d replicas, each running %s (%s, labs/%s)", n, lr.spec.Who, lr.lab.name, lr.spec.Lab))
	if lr.lab.prepare != nil {
		if err := lr.lab.prepare(ctx, run); err != nil {
			return history.Verdict{}, err
		}
	}
	lr.armNotes(run)
	rs, err := run.NewReplicas(n)
	if err != nil {
		return history.Verdict{}, err
	}
	for i, r := range rs {
		if i > 0 && lr.exploring() {
			lr.waitStarted(ctx, rs[i-1].Name)
		}
		if err := r.Start(lr.body); err != nil {
			return history.Verdict{}, err
		}
	}
	if len(lr.faults) > 0 {
		ictx, stop := context.WithCancel(ctx)
		injected := make(chan struct{})
		go func() { defer close(injected); lr.injectOwn(ictx, run) }()
		defer func() { stop(); <-injected }()
	}
	if experiment.WaitFor(ctx, 30*time.Second, func() bool { return lr.allRunning(n) }) {
		run.Figure("replicas_running_s", run.Elapsed().Seconds(), "s", fmt.Sprintf("all %d replicas run the lab's code %.2f s after the run began", n, run.Elapsed().Seconds()))
	}
	wait := 10*time.Second + run.TTLDuration()
	experiment.WaitFor(ctx, wait, func() bool { return lr.noneWritten(n) || lr.owner(ctx, run, 0) != nil })
	switch {
	case lr.noneWritten(n):
		// Nothing to put under faults: the verdict names the lab's
		// code as not written, from the replicas' own words.
		run.Note("every replica's code says the lab is not written yet: no schedule is played")
	case lr.owner(ctx, run, 0) == nil:
		run.Note("no replica became leader within %s", wait)
		fallthrough
	default:
		joined := lr.joinLate(ctx, run)
		if err := lr.playSchedule(ctx, run); err != nil {
			return history.Verdict{}, err
		}
		<-joined
		watch := 3 * run.TTLDuration()
		if run.Params.Watch > 0 {
			watch = run.Params.Watch
		}
		run.Phase(ctx, fmt.Sprintf("watch for %.1f s", watch.Seconds()))
		experiment.Sleep(ctx, watch)
	}
	run.Phase(ctx, labStopPhase)
	lr.stopAll(run.Replicas())
	// Give the watch a moment to report the keys a clean shutdown
	// deleted, or that a lease left behind took with it
	// (labReleasedOnStop judges what is left).
	experiment.WaitFor(ctx, run.TTLDuration()+time.Second, func() bool {
		h := run.History()
		return !slices.ContainsFunc(stillHeld(&h, lr.lab.owned), func(k history.StoreKey) bool { return k.Key != lr.lab.neighbour })
	})
	return history.Verdict{}, ctx.Err()
}

// labReleaseWait is how soon after a stopped replica's Run returned its
// keys must be gone: a resign or a revoke deletes them before it returns.
const labReleaseWait = 500 * time.Millisecond

// labStopPhase begins the shutdown, which the checker tells apart.
const labStopPhase = "stop: every replica is told to shut down (SIGTERM: Run's context is cancelled)"

// owner waits up to d for a replica that believes it leads.
func (lr *labRun) owner(ctx context.Context, run *experiment.Run, d time.Duration) *experiment.Replica {
	var o *experiment.Replica
	experiment.WaitFor(ctx, d, func() bool {
		for _, r := range run.Replicas() {
			if st := r.State(); st.Role == experiment.RoleOwner && !st.Paused && !st.Crashed {
				o = r
				return true
			}
		}
		return false
	})
	return o
}

// stopAll shuts every replica down at once and waits for them.
func (lr *labRun) stopAll(rs []*experiment.Replica) {
	for _, r := range rs {
		r.Cancel()
	}
	for _, r := range rs {
		<-r.Done()
	}
}
