package experiment

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/experiment"
)

// TestTimelineFolds: lease renewals, grants and key changes that leave
// etcd's holder as it was fold, with one owner's accepted writes, into
// one column between two events that matter; another writer's write (or
// the same writer's with another token) starts a new fold; a key change
// that gives etcd another holder is a column of its own; the script's
// waiting lines are left out.
func TestTimelineFolds(t *testing.T) {
	tl := buildTimeline(fencingEvents(), []string{"b1", "b2", "b3"}, nil, false)
	var got []string
	for i, it := range tl.items {
		e := tl.events[it.first]
		switch {
		case it.fold != nil:
			got = append(got, "fold("+foldText(it.fold)+")")
		case e.Kind == history.KeyChanged:
			got = append(got, "etcd:"+tl.holds[i].holder)
		default:
			got = append(got, string(e.Kind)+":"+e.Replica)
		}
	}
	want := []string{
		"part:", "phase:", "fold(1 lease granted)", "etcd:b1", "acquired:b1",
		"fold(8 writes accepted from b1 with token 6 · 8 lease renewals · 2 leases granted · 2 etcd key changes)",
		"phase:", "paused:b1", "fold(4 lease renewals)", "etcd:b3", "acquired:b3",
		"fold(7 writes accepted from b3 with token 7 · 7 lease renewals)",
		"phase:", "resumed:b1", "write-rejected:b1", "invariant-violated:b1",
		"fold(1 write accepted from b3 with token 7)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Another writer, then the first again with a new token: three folds.
	ev := func(r string, tok int64) history.Event {
		return history.Event{Kind: history.WriteAccepted, Replica: r, Token: tok}
	}
	tl = buildTimeline([]history.Event{ev("a", 1), ev("a", 1), ev("b", 2), ev("a", 3),
		{Kind: history.Waiting, Value: 1, Text: "the script waits"}, ev("a", 3)}, nil, nil, false)
	if len(tl.items) != 3 || tl.items[2].fold.counts[history.WriteAccepted] != 2 {
		t.Fatalf("writes by a, b, a (new token), a: %d items, want 3 (the last of 2 writes)", len(tl.items))
	}
}

// TestCursorShowsThatInstant: ←/→ move the cursor through the items; the
// lanes' labels, the cards and "etcd holds" then show the state at that
// instant, what each replica believed beside what etcd held; → past the
// last item (or end) follows the run again.
func TestCursorShowsThatInstant(t *testing.T) {
	m := running(newModel(t, "fencing", false, 78, 22))
	tl := m.timeline()
	paused := -1
	for i, it := range tl.items {
		if tl.events[it.first].Kind == history.Paused {
			paused = i
		}
	}
	for range len(tl.items) - 1 - paused {
		press(m, "left")
	}
	if m.live || m.cursor != paused {
		t.Fatalf("cursor %d (live %v), want the pause at %d", m.cursor, m.live, paused)
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
	if m.cursor != 0 || m.live {
		t.Fatalf("home: cursor %d, live %v", m.cursor, m.live)
	}
	press(m, "end")
	if !m.live || !strings.Contains(view(m), "timeline live") {
		t.Fatalf("end does not follow the run again:\n%s", view(m))
	}
	press(m, "left", "right")
	if !m.live {
		t.Fatal("→ onto the last item does not follow the run again")
	}
}

// TestJumpToViolation: v goes to the next violation or refused write
// from the cursor, round to the first; with none it says so.
func TestJumpToViolation(t *testing.T) {
	m := running(newModel(t, "fencing", false, 78, 22))
	press(m, "home", "v")
	tl := m.timeline()
	if e := tl.events[tl.items[m.cursor].first]; e.Kind != history.WriteRejected {
		t.Fatalf("first v: on %s, want the refused write", e.Kind)
	}
	if v := view(m); !strings.Contains(flat(v), `refused: write "b1#9" with token 6 rejected: the resource has seen token 7`) {
		t.Fatalf("the refused write is not shown in full:\n%s", v)
	}
	press(m, "v")
	if e := tl.events[tl.items[m.cursor].first]; e.Kind != history.InvariantViolated {
		t.Fatalf("second v: on %s, want the violation", e.Kind)
	}
	press(m, "v")
	if e := tl.events[tl.items[m.cursor].first]; e.Kind != history.WriteRejected {
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
	if cur := m.cursorOf(tl); !ok || tl.at(cur) != at || tl.events[tl.items[cur].first].Kind != history.WriteRejected {
		t.Errorf("the cursor is on item %d at %v, the checker's focus is %v (%v)", cur, tl.at(cur), at, ok)
	}
	noWordCut(t, m, "done fencing")
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
		m.snap.atStep = true
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
	m.snap.atStep = true
	m.snap.events = append(m.snap.events, history.Event{At: 3200 * time.Millisecond, Kind: history.Phase, Text: "P1 wakes up and unlocks"})
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

// TestRetiredLaneEndsWhenItLeaves: a replica the run retired keeps its
// lane while it is in the run, quiet or not, until etcd deletes its key
// (or its own last event, whichever is later), and is gone after.
func TestRetiredLaneEndsWhenItLeaves(t *testing.T) {
	evs := fencingEvents()
	del := history.Event{At: 3300 * time.Millisecond, Kind: history.KeyChanged,
		Facts: &history.Facts{Op: "delete", Key: "election-1/694d7c1e5f2a9b07", Revision: 10,
			Held: &history.StoreKey{Key: "election-1/694d7c1e5f2a9b07", ModRevision: 10},
			Prev: []history.StoreKey{{Key: "election-1/694d7c1e5f2a9b07", Value: "b2"}}}}
	evs = append(evs, del, history.Event{At: 3400 * time.Millisecond, Kind: history.Phase, Text: "next variant"})
	tl := buildTimeline(evs, []string{"b1", "b2", "b3"}, map[string]bool{"b2": true}, false)
	n := len(tl.items)
	if s := tl.states[n-2][1]; s.gone {
		t.Fatal("b2 is gone before etcd deleted its key")
	}
	if s := tl.states[n-1][1]; !s.gone {
		t.Fatal("b2 is still in the run after etcd deleted its key and the run retired it")
	}
	if s := tl.states[n-1][2]; s.gone {
		t.Fatal("b3, not retired, left the lanes")
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
		m.cursor = m.timeline().focus(&history.History{Scenario: "fencing", Events: evs})
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

// TestWrapKeepsHyphenatedNames: text wraps between words only, never at
// the hyphen of a key's name, and a clamped text ends after a word.
func TestWrapKeepsHyphenatedNames(t *testing.T) {
	got := clampWords("With the versioned unlock, P1's unlock was refused: lock-versioned's ModRevision is 10, not 8", 40, 0)
	for _, l := range got {
		if strings.HasSuffix(l, "-") || ansi.StringWidth(l) > 40 {
			t.Fatalf("line %q of %q", l, got)
		}
	}
	got = clampWords("one two three four five six seven eight nine ten eleven", 20, 2)
	if len(got) != 2 || got[1] != "five six seven…" {
		t.Fatalf("clamped: %q", got)
	}
}

// TestHolderIsAReplica: etcd's holder comes from keys whose values name a
// replica; a change to keys that hold something else (lab 09's committed
// offsets, its members' empty keys) leaves it as it was.
func TestHolderIsAReplica(t *testing.T) {
	put := func(key, value string, rev int64) history.Event {
		k := history.StoreKey{Key: key, Value: value, CreateRevision: rev, ModRevision: rev}
		return history.Event{Kind: history.KeyChanged, Facts: &history.Facts{Op: "put", Key: key, Revision: rev, Held: &k}}
	}
	del := func(key, value string, rev int64) history.Event {
		k := history.StoreKey{Key: key, ModRevision: rev}
		return history.Event{Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: key, Revision: rev, Held: &k,
			Prev: []history.StoreKey{{Key: key, Value: value}}}}
	}
	events := []history.Event{
		put("group/shards/000", "r2", 5),
		put("group/offsets/000", "17961627026752", 6),
		put("group/workers/r1", "", 7),
		del("group/workers/r1", "", 8),
		del("group/shards/000", "r2", 9),
	}
	tl := buildTimeline(events, []string{"r1", "r2"}, nil, false)
	var got []string
	for i := range tl.items {
		got = append(got, tl.holds[i].holder)
	}
	// The three changes between fold into one item: etcd's holder stayed.
	if want := []string{"r2", "r2", ""}; !slices.Equal(got, want) {
		t.Fatalf("etcd's holder after each change: %q, want %q", got, want)
	}
}
