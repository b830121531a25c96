package experiment

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/history"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/lessons"
)

// Your own code as the replicas: a lab run is a run whose replicas are
// child processes, each one copy of the learner's lab code (built by
// internal/labrun), each with its own fault proxies in front of etcd. The
// parent keeps everything else a run has: the etcd, the key watch, the
// fenced resource, the faults, the history and the checker. A child
// reports what the lab's code did as History events on its standard
// output (labproc.go), and asks the resource for its writes there.

// The events only lab runs record.
const (
	// ReplicaFailed: a replica's code failed on its own (it panicked,
	// hung when stopped, returned before it was stopped, or is not
	// written yet). Text says how, from what its process said.
	ReplicaFailed history.Kind = "replica-failed"
)

// ErrLabClock: a schedule asked a lab run to change a replica's clock.
var ErrLabClock = errors.New("a lab run cannot change a replica's clock: its process reads the operating system's clock (the lab's timers and etcd's client alike), which the playground has no way to slow")

// LabReplica is what a replica process is told: its name, its own fault
// proxies, the namespace every key goes under and the lab's prefix in it.
type LabReplica struct {
	Name      string
	Endpoints []string
	Namespace string
	Prefix    string
	TTL       int64
}

// LabSpec says which lab to run as the replicas and how.
type LabSpec struct {
	// Lab is the lab's id ("07_election"); the run's scenario is
	// LabScenarioName(Lab).
	Lab string
	// Who says whose code runs, for the history ("your code", "the
	// reference solution").
	Who string
	// Command makes the (unstarted) command of one replica process.
	Command func(r LabReplica) *exec.Cmd
	// Schedule is a named schedule (LabSchedules); "" with Params.Faults
	// (a learner's schedule read from a history) or for a calm run.
	Schedule string
	// End is closed when the learner ends a run of the schedule LabByHand,
	// which waits for it (LabByHandLimit at most); that schedule needs it.
	End <-chan struct{}
}

// labKind is a lab whose code can play a replica: what the engine needs
// to run it and to judge its history. A new lab is one labKind (in a
// file lab<NN>.go beside its properties) and its entry in labTemplates.
type labKind struct {
	// scenario is the template of the lab's runs: its name
	// (LabScenarioName), texts, limits and the properties (Shows) its
	// checker holds the code to. Run is labWithoutSpec.
	scenario *Scenario
	// prefix is what each replica process is told as -prefix: the lab's
	// keys live under it, inside the run's namespace.
	prefix string
	// owned is the prefix of the keys that stand for ownership (the
	// election's candidates, the lock): what a clean shutdown must
	// delete and the end of the run waits to see gone.
	owned string
	// returned is how the note a replica's process sends when the lab's
	// code returned after the stop begins ("Candidate.Run returned").
	returned string
	// name is how the course names the lab ("lab 7.3"; labKinds).
	name string
	// inLine, if set, says from the history whether the replica named
	// waits in line at this moment (a waiter schedule's moment to
	// strike); without it, a replica that has not led for a moment does.
	inLine func(events []history.Event, name string) bool
	// prepare, if set, sets the scene in etcd before the replicas start
	// (a neighbour's keys the lab's code must leave alone).
	prepare func(ctx context.Context, run *Run) error
}

// labTemplates are the labs whose code can play a replica, by lab id.
// Read them through labKinds, which titles them.
var labTemplates = map[string]*labKind{
	"05_etcd_lock":    lab05,
	"06_fenced_write": lab06,
	"07_election":     lab07,
	"08_herd":         lab08,
	"09_shards":       lab09,
}

var labTitlesOnce sync.Once

// labKinds returns labTemplates, each scenario's title numbered as the
// course numbers its lab (lesson 7's third lab is "Lab 7.3"; the lab
// folders are numbered in the order they were written), from the
// lessons' own list of labs, once.
func labKinds() map[string]*labKind {
	labTitlesOnce.Do(func() {
		c := lessons.Outline(content.Sources())
		for id, k := range labTemplates {
			k.name = c.LabName(id) // "lab 7.3", or "lab 08_herd" if no lesson lists it
			k.scenario.Title = "Lab " + strings.TrimPrefix(k.name, "lab ") + " as the replicas: " + k.scenario.Title
		}
	})
	return labTemplates
}

// labWithoutSpec is the template's script: a lab run needs its replicas'
// binary, which only StartLab is given.
func labWithoutSpec(ctx context.Context, run *Run) (history.Verdict, error) {
	return history.Verdict{}, fmt.Errorf("%s runs the lab's own code: start it with playground experiment run --lab", run.Scenario.Name)
}

// LabScenarioName is the scenario name of a lab's runs.
func LabScenarioName(lab string) string { return "lab-" + lab }

// LabIDs lists the labs that have a runner.
func LabIDs() []string {
	out := make([]string, 0, len(labTemplates))
	for id := range labTemplates {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// LabScenario returns the scenario of a lab's runs (nil for a lab with no
// runner): what Lookup finds for a lab run's history, so that the checker
// and a replay judge it like any other.
func LabScenario(lab string) *Scenario {
	if k := labKinds()[lab]; k != nil {
		return k.scenario
	}
	return nil
}

// IsLabRun says whether a history's scenario is a lab run's.
func IsLabRun(scenario string) bool { return lookupLab(scenario) != nil }

func lookupLab(name string) *Scenario {
	for _, k := range labKinds() {
		if k.scenario.Name == name {
			return k.scenario
		}
	}
	return nil
}

// StartLab begins a run of the lab's own code as the replicas.
func StartLab(ctx context.Context, spec LabSpec, p history.Params, env Env, sink func(history.Event)) (*Run, error) {
	kind := labKinds()[spec.Lab]
	if kind == nil {
		return nil, fmt.Errorf("%w: lab %q has no runner", ErrUnknown, spec.Lab)
	}
	if spec.Schedule != "" && labSchedules[spec.Schedule] == nil {
		return nil, fmt.Errorf("%w: no schedule %q (%s)", ErrUnknown, spec.Schedule, strings.Join(LabScheduleNames(), ", "))
	}
	if LabScheduleEndsByHand(spec.Schedule) && spec.End == nil {
		return nil, fmt.Errorf("schedule %s: the run ends by hand, and nothing can end it (LabSpec.End)", spec.Schedule)
	}
	for _, f := range p.Faults {
		if f.Kind == history.ClockChanged {
			return nil, ErrLabClock
		}
	}
	sc := *kind.scenario
	own, rest := labOwnFaults(p.Faults)
	p.Faults = rest
	sc.NeedsCluster = LabScheduleNeedsCluster(spec.Schedule) || LabFaultsNeedCluster(own)
	lr := &labRun{spec: spec, kind: kind, faults: own, running: map[string]bool{}, notWritten: map[string]bool{}, procs: map[string]*labProc{}}
	sc.Run = lr.script
	return startScenario(ctx, &sc, p, env, sink)
}

// labRun is the state of one lab run's script.
type labRun struct {
	spec LabSpec
	kind *labKind
	run  *Run
	// faults are the steps of a replayed schedule only a lab run plays
	// (labOwnFaults); Params.Faults keeps the rest.
	faults []history.ScheduledFault

	mu         sync.Mutex
	running    map[string]bool     // replicas whose process said it runs the lab's code
	notWritten map[string]bool     // ... and then that the lab is not written yet
	procs      map[string]*labProc // each replica's current process
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

func (lr *labRun) allRunning(n int) bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return len(lr.running) >= n
}

// script starts the replicas, waits for a first leader, plays the
// schedule, watches a while and stops every replica as a shutdown would.
func (lr *labRun) script(ctx context.Context, run *Run) (history.Verdict, error) {
	lr.run = run
	n := run.Params.Replicas
	run.Phase(ctx, fmt.Sprintf("start %d replicas, each running %s (%s, labs/%s)", n, lr.spec.Who, lr.kind.name, lr.spec.Lab))
	if lr.kind.prepare != nil {
		if err := lr.kind.prepare(ctx, run); err != nil {
			return history.Verdict{}, err
		}
	}
	rs, err := run.newReplicas(n)
	if err != nil {
		return history.Verdict{}, err
	}
	for _, r := range rs {
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
	if waitFor(ctx, 30*time.Second, func() bool { return lr.allRunning(n) }) {
		run.figure("replicas_running_s", run.elapsed().Seconds(), "s", fmt.Sprintf("all %d replicas run the lab's code %.2f s after the run began", n, run.elapsed().Seconds()))
	}
	wait := 10*time.Second + run.tTLDuration()
	waitFor(ctx, wait, func() bool { return lr.noneWritten(n) || lr.owner(ctx, run, 0) != nil })
	switch {
	case lr.noneWritten(n):
		// Nothing to put under faults: the verdict names the lab's
		// code as not written, from the replicas' own words.
		run.Note("every replica's code says the lab is not written yet: no schedule is played")
	case lr.owner(ctx, run, 0) == nil:
		run.Note("no replica became leader within %s", wait)
		fallthrough
	default:
		if err := lr.playSchedule(ctx, run); err != nil {
			return history.Verdict{}, err
		}
		run.Phase(ctx, fmt.Sprintf("watch for %d s", 3*run.TTL()))
		sleep(ctx, 3*run.tTLDuration())
	}
	run.Phase(ctx, labStopPhase)
	lr.stopAll(run.Replicas())
	// Give the watch a moment to report the keys a clean shutdown
	// deleted, or that a lease left behind took with it
	// (labReleasedOnStop judges what is left).
	waitFor(ctx, run.tTLDuration()+time.Second, func() bool {
		h := run.History()
		return len(stillHeld(&h, lr.kind.owned)) == 0
	})
	return history.Verdict{}, ctx.Err()
}

// labReleaseWait is how soon after a stopped replica's Run returned its
// keys must be gone: a resign or a revoke deletes them before it returns.
const labReleaseWait = 500 * time.Millisecond

// labStopPhase begins the shutdown, which the checker tells apart.
const labStopPhase = "stop: every replica is told to shut down (SIGTERM: Run's context is cancelled)"

// owner waits up to d for a replica that believes it leads.
func (lr *labRun) owner(ctx context.Context, run *Run, d time.Duration) *Replica {
	var o *Replica
	waitFor(ctx, d, func() bool {
		for _, r := range run.Replicas() {
			if st := r.State(); st.Role == RoleOwner && !st.Paused && !st.Crashed {
				o = r
				return true
			}
		}
		return false
	})
	return o
}

// stopAll shuts every replica down at once and waits for them.
func (lr *labRun) stopAll(rs []*Replica) {
	for _, r := range rs {
		r.mu.Lock()
		if r.cancel != nil {
			r.cancel()
		}
		r.mu.Unlock()
	}
	for _, r := range rs {
		<-r.Done()
	}
}
