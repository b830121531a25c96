package labrun

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/lessons"
)

// Lab is a lab whose code can play a replica: the one registry of lab
// runs. It says how the lab's replica program is built (File, Main), and
// what a run of it needs and is judged by: the properties its history is
// held to (its scenario's Shows), the keys it owns, the scene it starts
// in. Every lab runs under every schedule (ScheduleNames); whether a run
// needs the in-process cluster depends on its schedule and faults alone
// (NeedsCluster). A new lab is one Lab, in a file lab<NN>.go beside its
// properties, and its line in labs.
type Lab struct {
	ID   string // "07_election"
	File string // the learner's file in labs/<ID>/
	Main string // the replica program's package, relative to the root

	// scenario is the template of the lab's runs: its name
	// (ScenarioName), texts, limits and the properties (Shows) its
	// checker holds the code to. Run is labWithoutSpec.
	scenario *experiment.Scenario
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
	// name is how the course names the lab ("lab 7.3"; registry).
	name string
	// inLine, if set, says from the history whether the replica named
	// waits in line at this moment (a waiter schedule's moment to
	// strike); without it, a replica that has not led for a moment does.
	inLine func(events []history.Event, name string) bool
	// prepare, if set, sets the scene in etcd before the replicas start
	// (a neighbour's keys the lab's code must leave alone).
	prepare func(ctx context.Context, run *experiment.Run) error
	// neighbour, if set, is the key prepare put that may share owned's
	// prefix but stands for no replica's ownership: the end of the run
	// does not wait for it to go.
	neighbour string
}

// labs are the labs with a runner. Read them through registry, which
// titles them.
var labs = []Lab{lab05, lab06, lab07, lab08, lab09}

var labTitlesOnce sync.Once

// registry returns labs, each scenario's title numbered as the course
// numbers its lab (lesson 7's third lab is "Lab 7.3"; the lab folders
// are numbered in the order they were written), from the lessons' own
// list of labs, once.
func registry() []Lab {
	labTitlesOnce.Do(func() {
		c := lessons.Outline(content.Sources())
		for i := range labs {
			l := &labs[i]
			l.name = c.LabName(l.ID) // "lab 7.3", or "lab 08_herd" if no lesson lists it
			l.scenario.Title = "Lab " + strings.TrimPrefix(l.name, "lab ") + " as the replicas: " + l.scenario.Title
		}
	})
	return labs
}

// byID is the lab whose id is id.
func byID(id string) (Lab, bool) {
	for _, l := range registry() {
		if l.ID == id {
			return l, true
		}
	}
	return Lab{}, false
}

// Find returns the lab whose id is id or starts with "id_" (07 finds
// 07_election), or false.
func Find(id string) (Lab, bool) {
	for _, l := range registry() {
		if l.ID == id || strings.HasPrefix(l.ID, id+"_") {
			return l, true
		}
	}
	return Lab{}, false
}

// IDs lists the labs with a runner.
func IDs() []string {
	out := make([]string, len(labs))
	for i, l := range labs {
		out[i] = l.ID
	}
	return out
}

// labWithoutSpec is the template's script: a lab run needs its replicas'
// binary, which only Start is given.
func labWithoutSpec(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	return history.Verdict{}, fmt.Errorf("%s runs the lab's own code: start it with playground experiment run --lab", run.Scenario.Name)
}

// ScenarioName is the scenario name of a lab's runs.
func ScenarioName(lab string) string { return "lab-" + lab }

// Scenario returns the scenario of a lab's runs (nil for a lab with no
// runner): what the scenario catalog's Lookup finds for a lab run's
// history, so that the checker and a replay judge it like any other.
func Scenario(lab string) *experiment.Scenario {
	if l, ok := byID(lab); ok {
		return l.scenario
	}
	return nil
}

// IsLabRun says whether a history's scenario is a lab run's.
func IsLabRun(scenario string) bool { return LookupScenario(scenario) != nil }

// LookupScenario returns the scenario of the lab runs named name (a
// history's Scenario), or nil.
func LookupScenario(name string) *experiment.Scenario {
	for _, l := range registry() {
		if l.scenario.Name == name {
			return l.scenario
		}
	}
	return nil
}

// Spec describes a run of l's replica program bin: the learner's code,
// or with reference the reference solution's, under the named schedule.
func (l Lab) Spec(bin string, reference bool, schedule string) Spec {
	who := "your code"
	if reference {
		who = "the reference solution"
	}
	return Spec{Lab: l.ID, Who: who, Schedule: schedule, Command: func(r ReplicaConfig) *exec.Cmd {
		args := []string{"-name", r.Name, "-endpoints", strings.Join(r.Endpoints, ","),
			"-namespace", r.Namespace, "-prefix", r.Prefix, "-ttl", strconv.FormatInt(r.TTL, 10)}
		if r.Faults != "" {
			args = append(args, "-faults", r.Faults)
		}
		if r.Sites {
			args = append(args, "-sites")
		}
		if r.CallTimeout > 0 {
			args = append(args, "-call-timeout", r.CallTimeout.String())
		}
		if r.Newcomer {
			args = append(args, "-newcomer")
		}
		return exec.Command(bin, args...)
	}}
}

// ReadHistory reads a history file of a lab run (a scenario's:
// scenario.ReadHistory).
func ReadHistory(r io.Reader) (history.History, error) {
	return experiment.ReadHistory(r, LookupScenario)
}
