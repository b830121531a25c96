package experiment

import (
	"context"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/history"
)

// Scenario is one experiment, known by its name; lessons and predict
// questions refer to it by that name.
type Scenario struct {
	Name    string
	Title   string
	Summary string // what it shows, one or two sentences
	// Faults says which faults the script injects, for the screen's header.
	Faults string
	// Resource: the replicas write to the protected resource (Run.Resource),
	// so the screen shows its row; elsewhere the row would only say 0.
	Resource bool
	// NeedsCluster: it stops etcd members or moves the raft leader, so it
	// runs only on the in-process 3-member cluster.
	NeedsCluster bool
	// OwnClusters: it starts the in-process clusters it runs on itself,
	// with raft settings of their own (Pre-Vote), so the run neither uses
	// Env's etcd nor starts the usual cluster: its observer gets a
	// private server, and an external cluster is refused as for
	// NeedsCluster.
	OwnClusters bool
	// NeedsOwnServer: it reconfigures etcd (auth), so it always starts a
	// private in-process server...
	NeedsOwnServer bool
	// NoReplicas: it starts no replicas (its etcd members are the
	// story), so there is nothing for the learner's fault keys to act
	// on, and no lease for a TTL to set: the screen offers neither.
	NoReplicas bool
	// ...unless it has RunAsLearner and runs on a shared cluster where the
	// learner logs in as a user of their own (a class cluster, with auth
	// already on): then it runs that instead, as that user.
	RunAsLearner func(ctx context.Context, run *Run) (history.Verdict, error)

	DefaultReplicas, MinReplicas, MaxReplicas int
	DefaultTTL                                int64
	// MinTTL is the shortest lease TTL the script works with (0 means
	// 1 s, etcd's minimum with the playground's fast ticks).
	MinTTL int64

	Run func(ctx context.Context, run *Run) (history.Verdict, error)
	// Predict is the question the screen asks before a run (see
	// Question): about what the checker will find, and not a question a
	// lesson page asks.
	Predict *Question
	// Shows is what the scenario exists to show, as properties of its
	// history: the checker's verdict (Check) replaces the script's
	// when it has any.
	Shows []history.Property
	// OwnRules: Shows judge ownership by rules of their own (a lab's
	// promises, by etcd's truth), so the live monitor, whose generic rule
	// flags two replicas that believe they own at once, stays quiet: it
	// would flag a paused holder that wakes and tries a write the fence
	// refuses, in a run those rules rightly call held.
	OwnRules bool
}

// Judge judges a history of the scenario by its properties
// (history.Judge); a verdict of OwnRules is one of rules (Verdict.Rules):
// what did not hold is a violation the run found.
func (sc *Scenario) Judge(h *history.History, runErr error) history.Verdict {
	v := history.Judge(h, sc.Shows, runErr)
	v.Rules = sc.OwnRules
	return v
}

// MaxTTL is the longest lease TTL an experiment accepts: scripts wait for
// leases to expire, several times over, so a longer one would keep the
// learner waiting for many minutes.
const MaxTTL = 60

// MaxReplicas is the most replicas any experiment runs, for scenarios that
// name no maximum of their own.
const MaxReplicas = 50

// TTLRange is the lease TTLs, in seconds, that s supports.
func (s *Scenario) TTLRange() (lo, hi int64) { return max(s.MinTTL, 1), MaxTTL }

// ReplicaRange is the number of replicas s supports.
func (s *Scenario) ReplicaRange() (lo, hi int) {
	lo, hi = max(s.MinReplicas, 1), s.MaxReplicas
	if hi == 0 {
		hi = MaxReplicas
	}
	return lo, hi
}

// Normalize is p with the scenario's defaults for what p leaves zero
// and its limits on the number of replicas.
func (s *Scenario) Normalize(p history.Params) history.Params {
	if p.Replicas == 0 {
		p.Replicas = s.DefaultReplicas
	}
	if s.MinReplicas > 0 {
		p.Replicas = max(p.Replicas, s.MinReplicas)
	}
	if s.MaxReplicas > 0 {
		p.Replicas = min(p.Replicas, s.MaxReplicas)
	}
	if p.TTL <= 0 {
		p.TTL = s.DefaultTTL
	}
	if p.TTL <= 0 {
		p.TTL = 1
	}
	if p.Seed == 0 {
		p.Seed = 1
	}
	if p.StepDelay > 0 {
		p.Step = true
	}
	return p
}

// SharedCluster says whether the scenario can run on a shared cluster
// reached with settings a (nil), or why not (ErrNeedsCluster,
// ErrNeedsInProcess): stopping members needs the in-process cluster, and
// turning auth on needs a private server, unless the learner is logged in
// as themself and the scenario has a RunAsLearner version.
func (s *Scenario) SharedCluster(a access.Settings) error {
	switch {
	case s.NeedsCluster || s.OwnClusters:
		return ErrNeedsCluster
	case s.NeedsOwnServer && (s.RunAsLearner == nil || a.User == ""):
		return ErrNeedsInProcess
	}
	return nil
}
