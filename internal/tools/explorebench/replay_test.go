package main

import "testing"

func TestReplayReproduces(t *testing.T) {
	for _, c := range []struct {
		want, got string
		same      bool
	}{
		{"stale-write", "stale-write", true},
		{"stale-write", "stale-write,clobbered", true}, // a property added since
		{"stale-write,clobbered", "stale-write", false},
		{"stale-write", "two-holders", false},
		{"stale-write", "", false}, // the replay held
	} {
		if got := reproduces(c.want, c.got); got != c.same {
			t.Errorf("reproduces(%q, %q) = %v, want %v", c.want, c.got, got, c.same)
		}
	}
}
