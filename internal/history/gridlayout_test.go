package history

import (
	"strings"
	"testing"
)

// TestGridLabels: sites in one file name it once, in the column's
// title, and each row begins with its line; sites in two files keep
// "file:line". A file name with a terminal's escape code is printed
// without it.
func TestGridLabels(t *testing.T) {
	title, labels := GridLabels([]Site{{Where: "labs/07_election/election.go:97", RPC: "LeaseKeepAlive", Role: "owner"},
		{Where: "labs/07_election/election.go:41", RPC: "Txn", Role: "waiter"}})
	if title != "election.go: line, RPC, role" {
		t.Errorf("title %q, want the one file named", title)
	}
	if strings.Join(labels, "|") != "97 LeaseKeepAlive owner|41 Txn waiter" {
		t.Errorf("labels %q", labels)
	}
	title, labels = GridLabels([]Site{{Where: "labs/09/shards.go:12", RPC: "Put", Role: "owner"}, {Where: "labs/09/x\x1b[2Jy.go:3", RPC: "Range", Role: "owner"}})
	if title != "call site, role" || labels[0] != "shards.go:12 Put owner" {
		t.Errorf("two files: title %q, labels %q", title, labels)
	}
	if strings.ContainsRune(labels[1], '\x1b') || !strings.HasSuffix(labels[1], ".go:3 Range owner") {
		t.Errorf("a file name's escape code reached the label: %q", labels[1])
	}
}

// TestGridHeadingCutsALongTitle: a title wider than the sites' column
// is cut there, so the kinds' names stay in their columns.
func TestGridHeadingCutsALongTitle(t *testing.T) {
	kinds := FaultKinds()
	_, siteW, head := GridHeading(kinds, 80, "a_file_name_much_longer_than_the_column.go: line, RPC, role")
	if r := []rune(head[0]); !strings.HasPrefix(string(r[siteW:]), string(kinds[0])) {
		t.Errorf("the first kind does not begin its column (%d): %q", siteW, head[0])
	}
}
