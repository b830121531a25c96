package experiment

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
)

// TestCursorShowsThatInstant: ←/→ move the cursor through the items; the
// lanes' labels, the cards and "etcd holds" then show the state at that
// instant, what each replica believed beside what etcd held; → past the
// last item (or end) follows the run again.
func TestCursorShowsThatInstant(t *testing.T) {
	m := running(newModel(t, "fencing", false, 78, 22))
	tl := m.timeline()
	paused := -1
	for i := range tl.Len() {
		if e, _ := tl.Event(i); e.Kind == history.Paused {
			paused = i
		}
	}
	for range tl.Len() - 1 - paused {
		press(m, "left")
	}
	if tl := m.timeline(); tl.Following() || tl.Cursor() != paused {
		t.Fatalf("cursor %d (live %v), want the pause at %d", tl.Cursor(), tl.Following(), paused)
	}
	v := view(m)
	for _, want := range []string{"▸b1 paused owner t6", "etcd b1 rev 8", "etcd at 1.05s election-1/ 3 keys · oldest b1 (create 6)", "1.050s b1 paused: work and network frozen"} {
		if !strings.Contains(v, want) {
			t.Errorf("at the pause, the view lacks %q:\n%s", want, v)
		}
	}
	// Two columns on, etcd has deleted b1's key: b1 still believes it
	// owns, etcd holds b3.
	press(m, "right", "right")
	if v := view(m); !strings.Contains(v, "▸b1 paused owner t6 ≠etcd") || !strings.Contains(v, "etcd b3 rev 9") {
		t.Errorf("after etcd deleted b1's key:\n%s", v)
	}
	// The cards at a tall size show the same instant.
	m.SetSize(158, 43)
	if v := view(m); !strings.Contains(v, "PAUSED") || !strings.Contains(v, "b1 paused owner · token 6 · lease 0.0s left · etcd holds b3") {
		t.Errorf("cards at the cursor:\n%s", v)
	}
	m.SetSize(78, 22)
	press(m, "home")
	if tl := m.timeline(); tl.Cursor() != 0 || tl.Following() {
		t.Fatalf("home: cursor %d, live %v", tl.Cursor(), tl.Following())
	}
	press(m, "end")
	if !m.timeline().Following() || !strings.Contains(view(m), "timeline live") {
		t.Fatalf("end does not follow the run again:\n%s", view(m))
	}
	press(m, "left", "right")
	if !m.timeline().Following() {
		t.Fatal("→ onto the last item does not follow the run again")
	}
}

// TestJumpToViolation: v goes to the next violation or refused write
// from the cursor, round to the first; with none it says so.
func TestJumpToViolation(t *testing.T) {
	m := running(newModel(t, "fencing", false, 78, 22))
	press(m, "home", "v")
	if e := cursorEvent(m); e.Kind != history.WriteRejected {
		t.Fatalf("first v: on %s, want the refused write", e.Kind)
	}
	if v := view(m); !strings.Contains(flat(v), `refused: write "b1#9" with token 6 rejected: the resource has seen token 7`) {
		t.Fatalf("the refused write is not shown in full:\n%s", v)
	}
	press(m, "v")
	if e := cursorEvent(m); e.Kind != history.InvariantViolated {
		t.Fatalf("second v: on %s, want the violation", e.Kind)
	}
	press(m, "v")
	if e := cursorEvent(m); e.Kind != history.WriteRejected {
		t.Fatalf("third v: on %s, want round to the refused write", e.Kind)
	}
	m.snap.events = m.snap.events[:10]
	press(m, "v")
	if v := view(m); !strings.Contains(v, "no violation or refused write in this run so far") {
		t.Fatalf("v with nothing to find:\n%s", v)
	}
}

// TestRunEndsOnWhatItShows: at 80x24, when a run ends after a flood of
// accepted writes and renewals, the violation it exists to show is on
// screen, uncut, next to the verdict; and no line is cut inside a word.
func TestRunEndsOnWhatItShows(t *testing.T) {
	m := newModel(t, "fencing", true, 78, 22)
	m.picked = 0
	m = running(m)
	for i := range 60 {
		at := 3200*time.Millisecond + time.Duration(i)*100*time.Millisecond
		m.snap.events = append(m.snap.events,
			history.Event{At: at, Kind: history.WriteAccepted, Replica: "b3", Token: 7, Text: fmt.Sprintf(`write "b3#%d" with token 7 accepted`, i+9)},
			history.Event{At: at + time.Millisecond, Kind: history.LeaseRenewed, Replica: "b3", TTL: 1})
	}
	m = done(m)
	v := view(m)
	if len(strings.Split(v, "\n")) > 22 {
		t.Fatalf("more than 22 lines:\n%s", v)
	}
	// The cursor is where the checker's verdict points: the stale write
	// the resource refused.
	for _, want := range []string{`3.050s b1 refused: write "b1#9" with token 6 rejected: the resource has seen token 7`, "result the effect showed", "You predicted:"} {
		if !strings.Contains(flat(v), want) {
			t.Errorf("the end of the run lacks %q:\n%s", want, v)
		}
	}
	tl := m.timeline()
	at, ok := scenario.Focus(&history.History{Scenario: "fencing", Events: m.snap.events})
	if cur := tl.Cursor(); !ok || tl.TimeOf(cur) != at || cursorEvent(m).Kind != history.WriteRejected {
		t.Errorf("the cursor is on item %d at %v, the checker's focus is %v (%v)", cur, tl.TimeOf(cur), at, ok)
	}
	noWordCut(t, m, "done fencing")
}

// cursorEvent is the first event of the item under the timeline's cursor.
func cursorEvent(m *Model) history.Event {
	tl := m.timeline()
	e, _ := tl.Event(tl.Cursor())
	return e
}

// flat is v on one line, its lines joined with spaces: text wrapped
// over lines reads as one.
func flat(v string) string { return strings.Join(strings.Fields(v), " ") }

// ellipsis finds the word before each "…".
var ellipsis = regexp.MustCompile(`(\S*)…`)

// noWordCut fails when a line of m's view at its size ends in a piece
// of a word: every word before a "…" must be a word of the same screen
// drawn wide enough that nothing is cut.
func noWordCut(t *testing.T, m *Model, name string) {
	t.Helper()
	v := view(m)
	w, h := m.Width, m.Height
	m.SetSize(1000, 200)
	words := map[string]bool{}
	for _, f := range strings.FieldsFunc(view(m), func(r rune) bool { return r == ' ' || r == '\n' || r == '…' }) {
		words[f] = true
	}
	m.SetSize(w, h)
	for _, l := range strings.Split(v, "\n") {
		for _, g := range ellipsis.FindAllStringSubmatch(l, -1) {
			if g[1] != "" && !words[g[1]] && !words[strings.TrimRight(g[1], ".,:;")] && !strings.HasSuffix(g[1], "…") {
				t.Errorf("%s at %dx%d: %q is cut inside a word (%q)", name, w, h, l, g[1])
			}
		}
		if ansi.StringWidth(l) > w {
			t.Errorf("%s at %dx%d: %q is %d wide", name, w, h, l, ansi.StringWidth(l))
		}
	}
}

// TestNoWordCutAt80: no experiment's screen, predicting, running or
// done, cuts a line inside a word at 80 columns.
func TestNoWordCutAt80(t *testing.T) {
	for _, name := range scenario.Names() {
		m := running(newModel(t, name, false, 78, 22))
		m.snap.atStep, m.snap.pending = true, "wake b1: it writes with its old token 6"
		noWordCut(t, m, "running "+name)
		m = newModel(t, name, true, 78, 22)
		noWordCut(t, m, "predict "+name)
		m.picked = 1
		noWordCut(t, done(m), "done "+name)
	}
}

// TestClockWhileTheScriptWaits: at a step, a lease nobody renews is
// named with the time etcd gives it, counting down while the learner
// reads; one its owner keeps alive is not.
func TestClockWhileTheScriptWaits(t *testing.T) {
	m := running(newModel(t, "ttl-unlock-bug", false, 78, 22))
	m.snap.atStep, m.snap.pending = true, "P1 wakes up and unlocks"
	m.snap.store = experiment.StoreState{At: clock, Revision: 12, Keys: []history.StoreKey{
		{Key: "lock-naive", Value: "p2", CreateRevision: 11, ModRevision: 11, Version: 1, Lease: 0x7a2b},
		{Key: "election-1/694d7c1e5f2a9b03", Value: "b3", CreateRevision: 7, ModRevision: 7, Version: 1, Lease: 0x9b03},
	}, Leases: map[int64]experiment.StoreLease{
		0x7a2b: {ID: 0x7a2b, GrantedTTL: 11, Left: 7 * time.Second, Precise: true},
		0x9b03: {ID: 0x9b03, GrantedTTL: 1, Left: 800 * time.Millisecond, Precise: true},
	}}
	m.snap.events = append(m.snap.events, history.Event{At: 3150 * time.Millisecond, Kind: history.LeaseRenewed, Replica: "b3", TTL: 1})
	v := view(m)
	if !strings.Contains(v, "While you read, etcd's clock runs: p2's lease: 7.0s left, not renewed") {
		t.Fatalf("no clock line for p2's lease:\n%s", v)
	}
	if strings.Contains(v, "b3's lease") {
		t.Fatalf("a lease its owner renews is called racing:\n%s", v)
	}
	m.now = func() time.Time { return clock.Add(2 * time.Second) }
	if v := view(m); !strings.Contains(v, "p2's lease: 5.0s left") {
		t.Fatalf("the clock does not run while the learner reads:\n%s", v)
	}
	m.snap.atStep = false
	if v := view(m); strings.Contains(v, "etcd's clock runs") {
		t.Fatalf("clock line when the script waits for nobody:\n%s", v)
	}
}

// TestWideShowsMoreLanes: with both variants of fencing in the history
// (six replicas) and the verdict under them, 80 columns draw the lanes
// the cursor's instant needs with short labels; 200 columns draw every
// lane, with long labels.
func TestWideShowsMoreLanes(t *testing.T) {
	var evs []history.Event
	for _, e := range fencingEvents() { // the first variant: a1..a3
		if e.Kind == history.PartBegins {
			e.Text = "fencing off"
		}
		e.Replica = strings.ReplaceAll(e.Replica, "b", "a")
		if e.Facts != nil && e.Facts.Held != nil {
			k := *e.Facts.Held
			k.Value = strings.ReplaceAll(k.Value, "b", "a")
			f := *e.Facts
			f.Held = &k
			e.Facts = &f
		}
		evs = append(evs, e)
	}
	// The first variant retires: etcd deletes the keys of a2 and a3.
	for _, k := range []history.StoreKey{{Key: "election-1/694d7c1e5f2a9b07", Value: "a2"}, {Key: "election-1/694d7c1e5f2a9b03", Value: "a3"}} {
		evs = append(evs, history.Event{At: 3300 * time.Millisecond, Kind: history.KeyChanged,
			Facts: &history.Facts{Op: "delete", Key: k.Key, Revision: 10, Held: &history.StoreKey{Key: k.Key, ModRevision: 10}, Prev: []history.StoreKey{k}}})
	}
	for _, e := range fencingEvents() {
		e.At += 4 * time.Second
		evs = append(evs, e)
	}
	lanes := func(w, h int) (n int, v string) {
		m := done(newModel(t, "fencing", false, w, h))
		m.snap.events = evs
		var retired []experiment.ReplicaState
		for _, r := range []string{"a1", "a2", "a3"} {
			retired = append(retired, experiment.ReplicaState{Name: r, Role: experiment.RoleRetired})
		}
		m.snap.all = append(retired, m.snap.replicas...)
		tl := m.timeline()
		tl.Focus(scenario.Focus(&history.History{Scenario: "fencing", Events: evs}))
		m.tl = tl
		v = view(m)
		return strings.Count(v, "\n a") + strings.Count(v, "\n▸a") + strings.Count(v, "\n b") + strings.Count(v, "\n▸b"), v
	}
	narrow, nv := lanes(78, 22)
	wide, wv := lanes(198, 48)
	if narrow >= 6 || narrow < 3 {
		t.Errorf("80 columns: %d lanes, want those of the instant (3) and fewer than all 6:\n%s", narrow, nv)
	}
	if wide != 6 {
		t.Errorf("200 columns: %d lanes, want all 6:\n%s", wide, wv)
	}
	if !strings.Contains(wv, "a1 owner · token 6 · lease 0.0s left · etcd holds a3") || !strings.Contains(wv, "b1 not started") || strings.Contains(nv, "· token") {
		t.Errorf("labels: long at 200 columns, short at 80:\n%s\n%s", nv, wv)
	}
}

// TestMemberLanesInNameOrder: a run with no replicas (flapping-link's
// members) draws its lanes m1, m2, m3 whichever member answered first,
// once each.
func TestMemberLanesInNameOrder(t *testing.T) {
	m := newModel(t, "flapping-link", false, 120, 40)
	status := func(at time.Duration, name string, leader string) history.Event {
		return history.Event{At: at, Kind: history.LeaderObserved, Replica: name, Text: name + " reports term 2",
			Facts: &history.Facts{Op: "status", RaftTerm: 2, Leader: leader}}
	}
	m.phase = phaseDone
	m.snap.events = []history.Event{status(time.Second, "m2", "m1"), status(2*time.Second, "m3", "m1"), status(3*time.Second, "m1", "m1")}
	lanes := m.timelinePanel(120, 12, 1)
	var order []string
	for _, l := range lanes {
		l = strings.TrimLeft(ansi.Strip(l), " ▸")
		if len(l) > 3 && l[0] == 'm' && l[2] == ' ' {
			order = append(order, l[:2])
		}
	}
	if strings.Join(order, " ") != "m1 m2 m3" {
		t.Fatalf("the member lanes read %v, want m1 m2 m3 once each:\n%s", order, strings.Join(lanes, "\n"))
	}
}
