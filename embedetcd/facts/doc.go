// Package facts pins, as tests against the embedded etcd, every number
// the course states about etcd's behaviour: minimum TTL, keep-alive
// cadence, expiry timing, what a raft leader change does to leases, and
// how the concurrency package orders and wakes its waiters. An etcd
// upgrade that changes one of them fails `make test` here, naming the
// lesson that must change with it. The package has no code of its own.
package facts
