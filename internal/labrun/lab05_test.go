package labrun

// Lab 05: a token that is the lease ID is not the key's CreateRevision;
// a lock key without the lease outlives its crashed holder; a plain
// Delete releases whoever holds the lock now (the paused holder, woken,
// takes the next holder's lock away); a Release by prefix deletes the
// neighbour's lock too.
var lab05Case = labCase{
	id:        "05",
	schedules: []string{"pause-owner", "cut-off-owner", "crash-owner"},
	bugs: []bugCase{
		{"solutions/05_etcd_lock/testdata/mutants/lease_as_token.patch", "calm", "wrong-token at"},
		{"solutions/05_etcd_lock/testdata/bugs/no_lease.patch", "crash-owner", "not-freed at"},
		{"solutions/05_etcd_lock/testdata/mutants/plain_delete.patch", "pause-owner", "released-another at"},
		{"solutions/05_etcd_lock/testdata/bugs/release_with_prefix.patch", "calm", "released-neighbour at"},
	},
	extra: stubRun,
}
