package experiment

import (
	"context"
	"slices"
)

// Scenario is one experiment, registered by name; lessons and predict
// questions refer to it by that name.
type Scenario struct {
	Name    string
	Title   string
	Summary string // what it shows, one or two sentences
	// Faults says which faults the script injects, for the screen's header.
	Faults string
	// NeedsCluster: it stops etcd members or moves the raft leader, so it
	// runs only on the in-process 3-member cluster.
	NeedsCluster bool
	// NeedsOwnServer: it reconfigures etcd (auth), so it always starts a
	// private in-process server.
	NeedsOwnServer bool

	DefaultReplicas, MinReplicas, MaxReplicas int
	DefaultTTL                                int64

	Run func(ctx context.Context, run *Run) (Verdict, error)
}

var registry []*Scenario

func register(s *Scenario) { registry = append(registry, s) }

// order is the course order; registration order (file init order) is not.
var order = []string{
	"singleton-vs-election", "cas-race", "ttl-unlock-bug", "renewal", "fencing",
	"failover-timing", "thundering-herd", "shard-ownership", "quorum",
	"leader-change-extends-leases", "least-privilege",
}

// Scenarios returns every scenario in course order.
func Scenarios() []*Scenario {
	out := slices.Clone(registry)
	slices.SortStableFunc(out, func(a, b *Scenario) int {
		return rank(a.Name) - rank(b.Name)
	})
	return out
}

func rank(name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

// Names returns every scenario's name in course order.
func Names() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name)
	}
	return out
}

// Lookup returns the scenario with the given name, or nil.
func Lookup(name string) *Scenario {
	for _, s := range registry {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (s *Scenario) normalize(p Params) Params {
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
	return p
}

// variants returns the values of an optional on/off choice to run: the
// one chosen, or both (off first, then on).
func variants(choice *bool) []bool {
	if choice != nil {
		return []bool{*choice}
	}
	return []bool{false, true}
}
