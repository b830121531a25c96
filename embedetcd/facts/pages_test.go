package facts

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/ownership-election/playground/content"
)

// statedIn lists the pages (and sections) of lessons 3 to 10 that the
// tests of this package name as stating each fact (lesson 2 is named
// too, by lesson only). If a page is renamed or a lesson
// moves, this test says so, so the pointers in the failure messages never
// lead nowhere.
var statedIn = map[string][]string{
	"03-locks-and-the-ttl-bug": {
		"# The watchdog",
	},
	"04-renewable-leases": {
		"# How often to renew: TTL/2, or TTL/3 like etcd",
		"# Losing the lease means stopping now",
		"# Where etcd's client differs",
	},
	"05-fencing-tokens": {
		"# In etcd, the token is the CreateRevision",
	},
	"06-tuning-the-ttl": {
		"# Sizing the TTL from R, J and S",
		"## Heartbeat at TTL/3",
		"# How long does failover take?",
		"# etcd's floor: minimum TTL and whole seconds",
		"# What losing quorum does to leases",
		"# Predict: etcd changes its own leader",
		"# When etcd's own leader changes",
		"# A leader change, in numbers",
		"# Putting it together",
	},
	"07-etcd-election-recipe": {
		"# The etcd recipe in one transaction",
		"# What the losers do while they wait",
		"# etcd's concurrency package",
		"# A lock belongs to its session",
		"# When Campaign returns an error",
	},
	"10-failure-modes-and-security": {
		"# No leader after an outage",
		"# Starting over after an outage",
		"# A waiter on a cut-off member",
		"# Watch events come from your member",
	},
}

func TestNamedPagesExist(t *testing.T) {
	for lesson, headings := range statedIn {
		b, err := fs.ReadFile(content.FS(), "lessons/"+lesson+"/lesson.md")
		if err != nil {
			t.Errorf("lesson %s, named by the facts tests, is gone: %v", lesson, err)
			continue
		}
		lines := strings.Split(string(b), "\n")
		for _, h := range headings {
			found := false
			for _, l := range lines {
				if strings.TrimSpace(l) == h {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("lesson %s has no heading %q, which a facts test names as stating its fact: "+
					"point the test at the page that now states it", lesson, h)
			}
		}
	}
}
