package main

import "testing"

// TestFindingNames: a lab run's violation goes by the name its verdict
// gives it first, hyphenated or not; a summary with none has none.
func TestFindingNames(t *testing.T) {
	for summary, want := range map[string]string{
		"Not shown: Two-owners at 9.82 s: r1's Owned() still listed shard 009 until 10.27 s.": "two-owners",
		"Not shown: Unowned at 4.15 s: shard 003 had no owner in etcd from 0.16 s.":           "unowned",
		"Not shown: Left-behind at 1.80 s: r2's code returned at 1.30 s.":                     "left-behind",
		"Every replica's code ran until it was told to stop.":                                 "",
	} {
		if got := finding(summary); got != want {
			t.Errorf("finding(%q) = %q, want %q", summary, got, want)
		}
	}
}
