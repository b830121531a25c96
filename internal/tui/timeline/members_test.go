package timeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// memberEvents is a run of flapping-link's shape written by hand: two
// parts, each a cluster of its own (members m1..m3, the same names),
// whose members report their raft status; in the first m1 leads in term
// 2, the link to m2 flaps and m3 leads in term 5; in the second m2 leads
// in term 2 throughout.
func memberEvents() []history.Event {
	at := time.Duration(0)
	status := func(m string, term uint64, leader string) history.Event {
		at += 100 * time.Millisecond
		text := fmt.Sprintf("%s reports term %d, leader %s", m, term, leader)
		return history.Event{At: at, Kind: history.LeaderObserved, Replica: m, Text: text,
			Facts: &history.Facts{Op: "status", Succeeded: true, RaftTerm: term, Leader: leader}}
	}
	evs := []history.Event{{Kind: history.PartBegins, Text: "pre-vote off"}}
	evs = append(evs, status("m1", 2, "m1"), status("m2", 2, "m1"), status("m3", 2, "m1"),
		history.Event{At: at, Kind: history.Partitioned, Replica: "m2", Origin: history.ByScript, Text: "flap 1: link m2-m1 down"},
		status("m2", 3, ""), status("m3", 5, "m3"), status("m1", 5, "m3"), status("m2", 5, "m3"))
	at += time.Second
	evs = append(evs, history.Event{At: at, Kind: history.PartBegins, Text: "pre-vote on"})
	return append(evs, status("m3", 2, "m2"), status("m2", 2, "m2"), status("m1", 2, "m2"))
}

// TestMembersDrawnAsTheyReport: lanes of etcd members say what each
// member reported (leader, follower, no leader, with its term), the
// leader's lane is drawn as a holder's (━, its term where its term
// begins), etcd's lane names the raft leader, a new part's cluster
// starts its lanes afresh, and an event does not repeat the member's
// name. They all read "follower", the leader drawn nowhere.
func TestMembersDrawnAsTheyReport(t *testing.T) {
	evs := memberEvents()
	m := OfHistory(theme.NewStyles(true, false), evs, false, -1)
	m.SetSize(78, 14)
	v := ansi.Strip(m.View())
	for _, want := range []string{" m2 leader · term 2", " m1 follower · term 2", " m3 follower · term 2", "etcd raft leader m2", "m1  reports term 2, leader m2"} {
		if !strings.Contains(v, want) {
			t.Errorf("at the end, no %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "m1  m1 ") || strings.Contains(v, "nobody") {
		t.Errorf("a name repeated, or etcd said to hold nobody:\n%s", v)
	}
	for _, c := range m.Cards(nil) {
		if !c.Member || c.Term != 2 || (c.Name == "m2") != (c.Role == history.RoleRaftLeader) {
			t.Errorf("card %+v", c)
		}
	}
	tl := m.built()
	lanes := tl.laneIndex()
	// In the first part: m3 leads in term 5 after m2's link flapped, m2
	// reported no leader meanwhile.
	i := itemOf(tl, 8) // m2 reports term 5, leader m3
	if s := tl.states[i][lanes["m3"]]; s.role != history.RoleRaftLeader || s.term != 5 {
		t.Errorf("m3 after its election: %+v", s)
	}
	if s := tl.states[itemOf(tl, 5)][lanes["m2"]]; s.role != history.RoleNoLeader || !s.cut {
		t.Errorf("m2 cut off, hearing no leader: %+v", s)
	}
	// At the second part's start no member of the first cluster is drawn.
	start := itemOf(tl, 9)
	for name, l := range lanes {
		if s := tl.states[start][l]; s.seen {
			t.Errorf("%s of the last part's cluster carries over: %+v", name, s)
		}
	}
	if !tl.leaderMoves() {
		t.Error("the leader's moves are not marked on etcd's lane")
	}
	// The leader's lane: ━, and its term's digits where the term begins.
	m.Seek(len(tl.items) - 1)
	rows := m.laneRows(tl, len(tl.items)-1, 200, 5)
	for _, r := range rows {
		if cells := strings.Join(r.cells, ""); strings.Contains(r.label, "m2 leader") && (!strings.Contains(cells, "━") || !strings.Contains(cells, "2")) {
			t.Errorf("m2's lane as leader: %q", strings.Join(r.cells, ""))
		}
	}
}

// itemOf is the timeline item that holds event i.
func itemOf(tl timeline, i int) int {
	for n, it := range tl.items {
		if it.first <= i && i <= it.last {
			return n
		}
	}
	return -1
}
