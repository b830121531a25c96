package scenario

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/history"
)

// expectLeaderChange: r1 crashed after writing owner, and the move
// restarted the lease at its full TTL. The new leader restarts it (TTL
// plus its election timeout left) at some moment between the
// announcement of the move and the TimeToLive read that follows, so the
// bounds come from that span as this run measured it, not from a quiet
// machine's timing: a busy machine that takes a second over the move and
// the read reads 3 of a TTL-4 lease, and that is no fault of etcd's.
// A lease the move did not restart would read at most the 1 s left
// before the move, and its key would be gone about a second after the
// announcement, not TTL + election timeout after it.
func expectLeaderChange(t *testing.T, v history.Verdict, events []history.Event) {
	t.Helper()
	wrote := slices.IndexFunc(events, func(e history.Event) bool { return e.Kind == history.Acquired && e.Replica == "r1" })
	crashed := slices.IndexFunc(events, func(e history.Event) bool {
		return e.Kind == history.Crashed && e.Replica == "r1" && e.Origin == history.ByScript
	})
	if wrote < 0 || crashed < wrote {
		t.Errorf("r1 wrote owner at event %d and crashed at event %d; want a crash after the write", wrote, crashed)
	}
	announced := slices.IndexFunc(events, func(e history.Event) bool {
		return e.Kind == history.Phase && strings.Contains(e.Text, "move raft leadership")
	})
	read := slices.IndexFunc(events, func(e history.Event) bool { return e.Figure == "ttl_after_move" })
	deleted := slices.IndexFunc(events, func(e history.Event) bool {
		return e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Op == "delete" && e.Facts.Key == "owner"
	})
	if announced < 0 || read < announced || deleted < read {
		t.Fatalf("events: move announced at %d, TTL read after it at %d, owner deleted at %d; want them in that order", announced, read, deleted)
	}
	ttl := time.Duration(leaderChangeScenario.DefaultTTL) * time.Second
	et := time.Duration(embedetcd.ClusterTicks.ElectionMs) * time.Millisecond // the shared cluster's
	span := events[read].At - events[announced].At
	lo := min(int64(ttl/time.Second), int64((ttl + et - span).Seconds()))
	if got := v.Figures["ttl_after_move"]; got < float64(lo) {
		t.Errorf("after the move TTL read %v; want >= %d (TTL %v plus the %v election timeout, less the %v from the move's announcement to the read)",
			got, lo, ttl, et, span.Round(time.Millisecond))
	}
	// etcd deletes the key no sooner than TTL + election timeout after
	// the restart, which came after the announcement: however slow the
	// machine, the key lived at least that long after it.
	if lived := events[deleted].At - events[announced].At; lived < ttl+et {
		t.Errorf("the key was deleted %v after the move was announced; want >= %v (TTL plus election timeout)", lived.Round(time.Millisecond), ttl+et)
	}
}
