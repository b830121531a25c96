package history

// The names experiment scenarios went by before they were renamed:
// lessons, saved progress and recorded histories written under an old
// name still find the scenario.

import "maps"

// renamed maps each old scenario name to the name it goes by now. A
// scenario renamed twice maps both old names to the newest.
var renamed = map[string]string{
	// Both were named for what they show, which gave the prediction away.
	"leader-change-extends-leases": "leader-change",
	"thundering-herd":              "lock-waiters",
}

// CurrentName is the name the scenario once called name goes by now, or
// name itself when it was never renamed.
func CurrentName(name string) string {
	if now, ok := renamed[name]; ok {
		return now
	}
	return name
}

// OldNames returns a copy of the table: old name to current name.
func OldNames() map[string]string { return maps.Clone(renamed) }
