package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/screen/screentest"
)

// put is etcd's watch seeing key put with value (a replica's name), at
// revision rev, under a lease.
func put(at time.Duration, key, value string, rev int64) history.Event {
	k := history.StoreKey{Key: key, Value: value, CreateRevision: rev, ModRevision: rev, Version: 1, Lease: 0x37e4 + rev}
	return history.Event{At: at, Kind: history.KeyChanged, Text: "etcd: " + key + " = " + value,
		Facts: &history.Facts{Op: "put", Key: key, Revision: rev, Held: &k}}
}

// byHandEvents are the first events of a by-hand run of lab 07 as its
// child reports them: r2 starts first and wins; r3 and then r1 line up
// behind it; r1's key is not in etcd yet.
func byHandEvents() []history.Event {
	ms := time.Millisecond
	return []history.Event{
		{At: 10 * ms, Kind: history.Phase, Step: 1, Text: "start 3 replicas"},
		{At: 60 * ms, Kind: history.Note, Replica: "r2", Text: "the lab's Candidate.Run started"},
		{At: 90 * ms, Kind: history.LeaseGranted, Replica: "r2", TTL: 2, Text: "etcd granted lease 2 for 2 s"},
		put(95*ms, "election/00000000000037e6", "r2", 2),
		{At: 120 * ms, Kind: history.Acquired, Replica: "r2", Token: 2, Text: "Work called for a term: token 2"},
		{At: 170 * ms, Kind: history.Note, Replica: "r3", Text: "the lab's Candidate.Run started"},
		{At: 190 * ms, Kind: history.LeaseGranted, Replica: "r3", TTL: 2, Text: "etcd granted lease 3 for 2 s"},
		put(195*ms, "election/00000000000037e7", "r3", 3),
		{At: 210 * ms, Kind: history.Note, Replica: "r1", Text: "the lab's Candidate.Run started"},
		{At: 300 * ms, Kind: history.Phase, Step: 2, Text: "schedule by-hand: no faults but yours"},
	}
}

// feed gives the view's running run events, as the child reports them
// (all at once, faster than the live timeline takes them), then turns
// the lab screen's spinner once, which gives it the rest.
func feed(m *Model, events []history.Event) {
	for _, e := range events {
		m.faultEvent(faultMsg{seq: m.seq, e: e})
	}
	m.CatchUp()
}

// TestByHandRunDrawsItsReplicas: a by-hand run of the learner's code,
// while it goes on, draws what its events say: a lane per replica that
// has said something (by number, not by who spoke first), the one that
// won as owner with its token, etcd's lane with the replica whose key
// it holds, and each key under the replica whose name it holds; no
// lane, card or key for a replica before its first event.
func TestByHandRunDrawsItsReplicas(t *testing.T) {
	m := newView(t, "07_election")
	m.open, m.seq = true, 1
	m.runs[0] = &faultRun{schedule: "by-hand", started: time.Now()}
	events := byHandEvents()
	feed(m, events[:5]) // r2 alone so far
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "r2 owner") || strings.Contains(view, "r1 ") || strings.Contains(view, "r3 ") {
		t.Fatalf("with only r2's events, the view should draw r2 as owner and no other replica:\n%s", view)
	}
	feed(m, events[5:])
	view = ansi.Strip(m.View())
	lanes := []string{"r1 follower", "r2 owner t2", "r3 candidate", " etcd r2 rev 3"}
	last := -1
	for _, l := range lanes {
		i := strings.Index(view, l)
		if i < 0 || i < last {
			t.Fatalf("at 80x24 the lanes should read %q in that order:\n%s", lanes, view)
		}
		last = i
	}
	if !strings.Contains(view, "etcd at 0.30s: r2 election/00000000000037e6 · r3 election/00000000000037e7") {
		t.Fatalf("at 80x24 the keys etcd holds should be named with their holders:\n%s", view)
	}
	if strings.Contains(view, "╭") {
		t.Fatalf("at 80x24 the lanes carry the state; there is no room for cards:\n%s", view)
	}

	m.SetSize(200, 55) // the lab screen at 200x60
	view = ansi.Strip(m.View())
	cards := cardLines(view)
	for _, want := range []string{"r1 follower", "r2 owner", "r3 candidate", "token 2"} {
		if !strings.Contains(cards, want) {
			t.Fatalf("the cards at 200x60 lack %q:\n%s", want, view)
		}
	}
	// Each key under the card of the replica whose name it holds: r1
	// none yet, r2 …37e6, r3 …37e7.
	under := keysRow(view)
	none, k2, k3 := strings.Index(under, "no key in etcd"), strings.Index(under, "election/…0000037e6"), strings.Index(under, "election/…0000037e7")
	if none < 0 || k2 < 0 || k3 < 0 || !(none < k2 && k2 < k3) {
		t.Fatalf("the keys under the cards read %q:\n%s", under, view)
	}
}

// TestLabRunShowsRaftLeader: a lab run on the 3-member cluster draws
// the member raft leadership moved to, from the move the run made.
func TestLabRunShowsRaftLeader(t *testing.T) {
	m := newView(t, "07_election")
	m.open, m.seq = true, 1
	m.runs[0] = &faultRun{schedule: "etcd-leader-change", started: time.Now()}
	feed(m, byHandEvents()[:5])
	feed(m, []history.Event{{At: time.Second, Kind: history.LeaderMoved, Replica: "m2", Origin: history.ByScript, Text: "raft leadership moved from m1 to m2"}})
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "etcd r2 · raft leader m2") || !strings.Contains(view, "⇄") {
		t.Fatalf("the etcd lane should name the raft leader m2 and mark its move:\n%s", view)
	}
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " ▸"), "m2 ") {
			t.Fatalf("the etcd member m2 has a lane of its own, as if it were a replica:\n%s", view)
		}
	}
}

// TestLiveTimelineKeys: during a run, ← moves the timeline's cursor back
// over the run so far and end follows it again; the fault keys still act.
func TestLiveTimelineKeys(t *testing.T) {
	m := newView(t, "07_election")
	m.open, m.seq = true, 1
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m.runs[0] = &faultRun{schedule: "by-hand", started: time.Now(), control: newControlPipe(ctx, &sentLines{})}
	feed(m, byHandEvents())
	r := m.runs[0]
	if !r.live.Following() {
		t.Fatal("the live timeline should follow the run")
	}
	m.faultsKey(screentest.Key("left"))
	if r.live.Following() {
		t.Fatal("← should leave the newest item")
	}
	m.faultsKey(screentest.Key("end"))
	if !r.live.Following() {
		t.Fatal("end should follow the run again")
	}
	m.faultsKey(screentest.Key("tab"))
	if view := ansi.Strip(m.View()); !strings.Contains(view, "▸r2") {
		t.Fatalf("tab should move the fault keys (and the lane's ▸) to r2:\n%s", view)
	}
}

// cardLines is the lines of view with a card's border in them.
func cardLines(view string) string {
	var out []string
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, "│") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// keysRow is the line under the cards: the keys of each.
func keysRow(view string) string {
	ls := strings.Split(view, "\n")
	for i, l := range ls {
		if strings.Contains(l, "╰") && i+1 < len(ls) {
			return ls[i+1]
		}
	}
	return ""
}

// TestScheduleListFitsAt80x24: in the 17 lines the lab screen gives the
// view at 80x24, every schedule is listed and the chosen one's
// description is whole, whichever is chosen: the intro gives way. With
// by-hand or explore chosen, the last schedules were cut off.
func TestScheduleListFitsAt80x24(t *testing.T) {
	m := newView(t, "07_election")
	m.SetSize(80, 17)
	m.Open()
	names := listNames()
	for i, chosen := range names {
		m.choice = i
		view := ansi.Strip(m.View())
		if n := strings.Count(view, "\n") + 1; n > 17 {
			t.Fatalf("%s chosen: %d lines for 17", chosen, n)
		}
		for _, n := range names {
			if !strings.Contains(view, "  "+n) && !strings.Contains(view, "▸ "+n) {
				t.Fatalf("%s chosen: %s is not listed:\n%s", chosen, n, view)
			}
		}
		words := strings.Fields(says(chosen))
		if last := words[len(words)-1]; !strings.Contains(view, last) {
			t.Fatalf("%s chosen: its description is cut before %q:\n%s", chosen, last, view)
		}
		if !strings.Contains(view, "Run your code under faults") {
			t.Fatalf("%s chosen: the heading is gone:\n%s", chosen, view)
		}
		if len(strings.Fields(says(chosen))) < 20 && !strings.Contains(view, "Three copies of labs/07_election") {
			t.Fatalf("%s chosen, a short description: the intro should stay:\n%s", chosen, view)
		}
	}
}

// TestLiveTimelineTakesEventsInBatches: events that come faster than
// liveEvery wait for the next batch (each batch builds the timeline from
// every event again), and the lab screen's spinner (CatchUp) gives the
// live timeline the rest.
func TestLiveTimelineTakesEventsInBatches(t *testing.T) {
	m := newView(t, "07_election")
	now := time.Now()
	m.opts.Now = func() time.Time { return now }
	m.open, m.seq = true, 1
	m.runs[0] = &faultRun{schedule: "by-hand", started: now}
	for _, e := range byHandEvents() {
		m.faultEvent(faultMsg{seq: 1, e: e})
	}
	r := m.runs[0]
	if r.followedLen != 1 {
		t.Fatalf("the live timeline took %d events in the same instant, want the first alone", r.followedLen)
	}
	now = now.Add(liveEvery)
	m.faultEvent(faultMsg{seq: 1, e: history.Event{At: time.Second, Kind: history.Note, Replica: "r3", Text: "still here"}})
	if r.followedLen != len(r.events) {
		t.Fatalf("after %v the live timeline took %d of %d events", liveEvery, r.followedLen, len(r.events))
	}
	m.faultEvent(faultMsg{seq: 1, e: history.Event{At: 2 * time.Second, Kind: history.Note, Replica: "r1", Text: "and me"}})
	m.CatchUp()
	if view := ansi.Strip(m.View()); r.followedLen != len(r.events) || !strings.Contains(view, "and me") {
		t.Fatalf("CatchUp should give the live timeline the last event:\n%s", view)
	}
}
