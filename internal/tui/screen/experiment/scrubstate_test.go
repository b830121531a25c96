package experiment

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/internal/tui/timeline"
)

// cursorTo moves m's cursor with ← from the live end to the first item
// ok accepts, counting back; it fails the test when there is none.
func cursorTo(t *testing.T, m *Model, ok func(tl timeline.Model, i int) bool) {
	t.Helper()
	tl := m.timeline()
	for i := tl.Len() - 1; i >= 0; i-- {
		if ok(tl, i) {
			press(m, "end")
			for range tl.Len() - 1 - i {
				press(m, "left")
			}
			if cur := m.timeline().Cursor(); cur != i {
				t.Fatalf("cursor %d, want %d", cur, i)
			}
			return
		}
	}
	t.Fatal("no such item")
}

func kindAt(k history.Kind, who string) func(tl timeline.Model, i int) bool {
	return func(tl timeline.Model, i int) bool {
		e, single := tl.Event(i)
		return single && e.Kind == k && e.Replica == who
	}
}

// TestScrubbedCandidate: a replica whose key waits in the election line
// reads as a candidate at the cursor (as its card does live), and as not
// started before it joined.
func TestScrubbedCandidate(t *testing.T) {
	m := running(newModel(t, "fencing", false, 78, 22))
	cursorTo(t, m, kindAt(history.Paused, "b1"))
	if v := view(m); !strings.Contains(v, " b2 candidate") || strings.Contains(v, "b2 follower") {
		t.Errorf("at the pause, b2 queues behind b1:\n%s", v)
	}
	press(m, "home")
	if v := view(m); strings.Contains(v, "b2 candidate") {
		t.Errorf("before b2's key, b2 is no candidate:\n%s", v)
	}
	// Once it owns, it is an owner, not a candidate.
	cursorTo(t, m, kindAt(history.Resumed, "b1"))
	if v := view(m); !strings.Contains(v, " b3 owner t7") {
		t.Errorf("after b3 won:\n%s", v)
	}
}

// TestScrubbedResource: the resource line shows the resource at the
// cursor, from the history's writes, not its state now.
func TestScrubbedResource(t *testing.T) {
	m := running(newModel(t, "fencing", false, 78, 22))
	if v := view(m); !strings.Contains(v, `"b3#8" by b3 · accepted 16 · rejected 1`) {
		t.Fatalf("live:\n%s", v)
	}
	cursorTo(t, m, kindAt(history.WriteRejected, "b1"))
	if v := view(m); !strings.Contains(v, `resource fencing on · highest 7 · "b3#7" by b3 · accepted 15 · rejected 1`) {
		t.Errorf("at the refused write:\n%s", v)
	}
	cursorTo(t, m, kindAt(history.Paused, "b1"))
	if v := view(m); !strings.Contains(v, `highest 6 · "b1#8" by b1 · accepted 8 · rejected 0`) {
		t.Errorf("at the pause:\n%s", v)
	}
	press(m, "end")
	if v := view(m); !strings.Contains(v, `"b3#8" by b3 · accepted 16 · rejected 1`) {
		t.Errorf("end, live again:\n%s", v)
	}
}

// TestLeaderMoveMarked: a raft leader move the history records is marked
// on the etcd lane, explained in the legend, and named in the etcd label
// from then on.
func TestLeaderMoveMarked(t *testing.T) {
	m := running(newModel(t, "leader-change", false, 158, 43))
	evs := m.snap.events
	i := len(evs) - 3
	move := history.Event{At: evs[i].At, Kind: history.LeaderMoved, Replica: "m2", Origin: history.ByScript, Text: "moved raft leadership to m2"}
	m.snap.events = append(append(append([]history.Event(nil), evs[:i]...), move), evs[i:]...)
	v := view(m)
	if !strings.Contains(v, "⇄") || !strings.Contains(v, "⇄ etcd leader moved") {
		t.Fatalf("no mark for the leader move:\n%s", v)
	}
	if !strings.Contains(v, "raft leader m2") {
		t.Errorf("the etcd label does not name the new leader:\n%s", v)
	}
	press(m, "home")
	if v := view(m); strings.Contains(v, "raft leader m2") {
		t.Errorf("before the move, the label names its leader:\n%s", v)
	}
	// At 80 columns the legend still names the mark, uncut.
	m.SetSize(78, 22)
	press(m, "end")
	if v := view(m); !strings.Contains(v, "⇄ new leader") {
		t.Errorf("80 columns: the legend does not explain ⇄:\n%s", v)
	}
	m.snap.events = evs
	if strings.Contains(view(m), "⇄") {
		t.Error("a timeline without a move has its mark")
	}
}

// TestTempoRestored: a screen starts at the tempo the learner chose
// last; t tells the root the new choice; a tempo the screen does not
// offer gives the default.
func TestTempoRestored(t *testing.T) {
	ctx := screen.Context{Styles: theme.NewStyles(true, true)}
	m := New(ctx, Options{Name: "fencing", Tempo: 8 * time.Second, TempoSet: true})
	m.SetSize(78, 22)
	if s := m.Status(); !strings.Contains(s, "auto-play, 8 s a step") {
		t.Fatalf("restored tempo: %q", s)
	}
	_, cmd := press(m, "t")
	if cmd == nil || cmd() != (screen.TempoChosen{Tempo: 0}) || !strings.Contains(m.Status(), "no pause") {
		t.Fatalf("t after 8 s: status %q", m.Status())
	}
	m = New(ctx, Options{Name: "fencing", Tempo: 0, TempoSet: true})
	if m.tempo != 0 {
		t.Errorf("a saved 'no pause' came back as %v", m.tempo)
	}
	for _, o := range []Options{{Name: "fencing", Tempo: 3 * time.Second, TempoSet: true}, {Name: "fencing"}} {
		if m := New(ctx, o); m.tempo != defaultTempo {
			t.Errorf("%+v: tempo %v, want the default", o, m.tempo)
		}
	}
}

// TestRoleLiveAsScrubbed: a waiter whose key queues in the lock's line
// (lock-waiters's predecessor way) reads the same live and scrubbed,
// on its lane's label and on its card, though the run's own report calls
// it a follower: the role comes from the history either way.
func TestRoleLiveAsScrubbed(t *testing.T) {
	m := newModel(t, "lock-waiters", false, 120, 40)
	queued := func(at time.Duration, name string, rev, lease int64) history.Event {
		k := history.StoreKey{Key: fmt.Sprintf("herd-queue/%016x", lease), Value: name, CreateRevision: rev, ModRevision: rev, Version: 1, Lease: lease}
		return history.Event{At: at, Kind: history.KeyChanged, Text: "etcd: " + k.Key + " = " + name,
			Facts: &history.Facts{Op: "put", Key: k.Key, Revision: rev, Succeeded: true, Lease: lease, Held: &k}}
	}
	ms := time.Millisecond
	m.phase, m.started = phaseRunning, clock.Add(-time.Second)
	m.tl.Follow()
	m.snap = snapshot{
		replicas: []experiment.ReplicaState{
			{Name: "q1", Role: experiment.RoleOwner, Token: 5, LeaseTTL: 2, LeaseLeft: time.Second},
			{Name: "q2", Role: experiment.RoleFollower, LeaseTTL: 2, LeaseLeft: time.Second},
		},
		events: []history.Event{
			{At: 10 * ms, Kind: history.LeaseGranted, Replica: "q1", TTL: 2},
			queued(20*ms, "q1", 5, 0x11),
			{At: 30 * ms, Kind: history.Acquired, Replica: "q1", Token: 5, Text: "got the lock"},
			{At: 40 * ms, Kind: history.LeaseGranted, Replica: "q2", TTL: 2},
			queued(50*ms, "q2", 6, 0x12),
		},
	}
	m.snap.all = m.snap.replicas
	live := view(m)
	if n := strings.Count(live, "q2 candidate"); n < 2 || strings.Contains(live, "q2 follower") {
		t.Fatalf("live: %d times 'q2 candidate' (want its label and its card):\n%s", n, live)
	}
	tl := m.timeline()
	tl.Seek(tl.Len() - 1)
	m.tl = tl
	scrubbed := view(m)
	if strings.Count(scrubbed, "q2 candidate") != strings.Count(live, "q2 candidate") || strings.Contains(scrubbed, "q2 follower") {
		t.Errorf("scrubbed to the same instant, q2 reads otherwise:\n%s", scrubbed)
	}
}

// TestFindingsOfOneInstant: two findings at one instant (b1's refused
// write and the two owners at once it makes) are both on screen at 80
// columns whichever the cursor is on, and v steps from one to the other.
func TestFindingsOfOneInstant(t *testing.T) {
	m := done(newModel(t, "fencing", false, 78, 22))
	refusal, violation := `refused: write "b1#9" with token 6`, "violation: two owners at once (b1 wrote)"
	if v := flat(view(m)); !strings.Contains(v, refusal) || !strings.Contains(v, "and at the same instant: b1 "+violation) {
		t.Fatalf("at the refusal:\n%s", view(m))
	}
	first := m.timeline().Cursor()
	press(m, "v")
	if v, cur := flat(view(m)), m.timeline().Cursor(); cur == first || !strings.Contains(v, "3.050s b1 "+violation) || !strings.Contains(v, "and at the same instant: b1 "+refusal) {
		t.Fatalf("v from the refusal (cursor %d, was %d):\n%s", cur, first, view(m))
	}
	if press(m, "v"); m.timeline().Cursor() != first {
		t.Errorf("v again: cursor %d, want back at %d", m.timeline().Cursor(), first)
	}
	// An item that is no finding gets no other item added.
	press(m, "home")
	if m.timeline().DetailLines(78) > 2 || strings.Contains(view(m), "and at the same instant") {
		t.Errorf("an instant without findings:\n%s", view(m))
	}
}
