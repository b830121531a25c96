// Package scenario holds the course's experiments: each scenario and
// case study in the file named after it (ttl_unlock_bug.go is
// ttl-unlock-bug), with its script, the properties its history is judged
// by and its prediction question, and the catalog that knows them by
// name (Lookup, old names, Start by name, a saved history judged again).
// The engine (internal/experiment) runs the *experiment.Scenario it is
// given and knows none of them. A lab run's scenario is labrun's, above
// this package: what reads both kinds of history asks both catalogs
// (the command line's runScenario).
package scenario

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// scenarios is every scenario, in course order: the order of the lessons
// that use them. Each one lives in the file named after it.
var scenarios = []*experiment.Scenario{
	singletonVsElectionScenario, // singleton_vs_election.go
	casRaceScenario,             // cas_race.go
	ttlUnlockBugScenario,        // ttl_unlock_bug.go
	renewalScenario,             // renewal.go
	fencingScenario,             // fencing.go
	failoverTimingScenario,      // failover_timing.go
	quorumScenario,              // quorum.go
	leaderChangeScenario,        // leader_change.go
	lockWaitersScenario,         // lock_waiters.go
	shardOwnershipScenario,      // shard_ownership.go
	leastPrivilegeScenario,      // least_privilege.go
	partitionedPrimaryScenario,  // partitioned_primary.go
	flappingLinkScenario,        // flapping_link.go
	zombieControllerScenario,    // zombie_controller.go
}

// Scenarios returns every scenario in course order.
func Scenarios() []*experiment.Scenario { return slices.Clone(scenarios) }

// Names returns every scenario's name in course order.
func Names() []string {
	out := make([]string, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.Name
	}
	return out
}

// Lookup returns the scenario with the given name, or nil. A name the
// scenario went by before it was renamed finds it too (CurrentName).
func Lookup(name string) *experiment.Scenario {
	name = history.CurrentName(name)
	for _, s := range scenarios {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Check judges a history by its scenario's properties (see history.Judge).
func Check(h *history.History, runErr error) history.Verdict {
	sc := Lookup(h.Scenario)
	if sc == nil {
		return history.Verdict{Scenario: h.Scenario, Summary: "unknown scenario " + h.Scenario}
	}
	return sc.Judge(h, runErr)
}

// Focus is the instant h's verdict is about (see history.Focus), judged
// by its scenario's properties; false for a scenario this build lacks.
func Focus(h *history.History) (time.Duration, bool) {
	sc := Lookup(h.Scenario)
	if sc == nil {
		return 0, false
	}
	return history.Focus(h, sc.Shows)
}

// ReadHistory reads a history file of a scenario of the catalog (a lab
// run's: labrun.ReadHistory).
func ReadHistory(r io.Reader) (history.History, error) { return experiment.ReadHistory(r, Lookup) }

// Replay is the verdict on a recorded history, computed again by the
// checker with its scenario's properties (experiment.Replay).
func Replay(h *history.History) history.Verdict { return experiment.Replay(h, Lookup(h.Scenario)) }

// variants returns the values of an optional on/off choice to run: the
// one chosen, or both (off first, then on).
func variants(choice *bool) []bool {
	if choice != nil {
		return []bool{*choice}
	}
	return []bool{false, true}
}

// runs says whether a run with the on/off choice runs the variant v.
func runs(choice *bool, v bool) bool { return choice == nil || *choice == v }

// Start begins a run of the scenario named name (an old name finds it
// too), or fails with experiment.ErrUnknown.
func Start(ctx context.Context, name string, p history.Params, env experiment.Env, sink func(history.Event)) (*experiment.Run, error) {
	sc := Lookup(name)
	if sc == nil {
		return nil, fmt.Errorf("%w: %q", experiment.ErrUnknown, name)
	}
	return experiment.Start(ctx, sc, p, env, sink)
}

// Execute runs the scenario named name to the end and returns its
// verdict.
func Execute(ctx context.Context, name string, p history.Params, env experiment.Env, sink func(history.Event)) (history.Verdict, error) {
	run, err := Start(ctx, name, p, env, sink)
	if err != nil {
		return history.Verdict{Scenario: name}, err
	}
	return run.Wait()
}
