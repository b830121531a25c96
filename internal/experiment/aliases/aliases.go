// Package aliases is the table of names experiment scenarios went by
// before they were renamed: lessons, saved progress and recorded
// histories written under an old name still find the scenario. It is
// the experiment registry's table (internal/experiment reads it in
// Lookup), kept in a package of its own, free of etcd, so that the
// progress file and the course loader can use it too.
package aliases

import "maps"

// renamed maps each old scenario name to the name it goes by now. A
// scenario renamed twice maps both old names to the newest.
var renamed = map[string]string{
	// Both were named for what they show, which gave the prediction away.
	"leader-change-extends-leases": "leader-change",
	"thundering-herd":              "lock-waiters",
}

// Current is the name the scenario once called name goes by now, or
// name itself when it was never renamed.
func Current(name string) string {
	if now, ok := renamed[name]; ok {
		return now
	}
	return name
}

// Table returns a copy of the table: old name to current name.
func Table() map[string]string { return maps.Clone(renamed) }
