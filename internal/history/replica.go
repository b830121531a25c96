package history

import "time"

// Role is what a replica believes it is, as its card shows it; the
// timeline works it out from the replica's own events at any instant.
type Role string

// The roles the scenarios give their replicas.
const (
	RoleFollower    Role = "follower"     // waiting, not in charge
	RoleCandidate   Role = "candidate"    // campaigning for ownership
	RoleOwner       Role = "owner"        // holds the lock or leadership
	RoleSteppedDown Role = "stepped down" // gave ownership up (lease lost)
	RoleWorker      Role = "worker"       // one of several owning shards
	RoleCrashed     Role = "crashed"      // its process is gone
	RoleRetired     Role = "retired"      // removed for good by the scenario
)

// The roles of an etcd member whose raft status a scenario reads (a
// LeaderObserved event with status facts): drawn as lanes like replicas.
const (
	RoleRaftLeader   Role = "leader"    // it reports itself as the raft leader
	RoleRaftFollower Role = "follower"  // it reports another member as leader
	RoleNoLeader     Role = "no leader" // it reports no leader (an election is on)
)

// ReplicaState is a snapshot of a replica for display: what a running
// run reports of it, or what the timeline says it believed at an
// instant of a history.
type ReplicaState struct {
	Name        string
	Role        Role
	Token       int64
	LeaseTTL    int64         // granted TTL of its current lease, 0 if none
	LeaseLeft   time.Duration // time left before its lease expires, as last renewed
	Paused      bool
	Partitioned bool
	Crashed     bool
	ClockRate   float64
	// Member says this is an etcd member, not a replica: Term is the
	// raft term it reported last; it has no token or lease.
	Member bool
	Term   uint64
}
