// Package timeline is the timeline component of the TUI: a run's history
// drawn as lanes, one per replica and one for etcd, with marks for
// writes, faults and the checker's findings, and a cursor that shows, at
// any instant, what each replica believed beside what etcd held. The
// experiment screen draws a live run with it, the lab screen a finished
// run of the learner's code. It depends on the history, the theme and
// the text helpers only: no etcd.
package timeline

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// Run is what the timeline draws: a run's history, and while the run
// goes on, what it reports of its replicas.
type Run struct {
	// Events are the run's history so far.
	Events []history.Event
	// Names are the run's replicas in creation order: lanes come in that
	// order, then any other replica the events name.
	Names []string
	// Retired are the replicas whose part of the run is over: their
	// lanes end after their last event.
	Retired map[string]bool
	// OwnRules says the run is judged by rules of its own (a lab run), so
	// the marks are its violation events, not the generic checker's
	// findings.
	OwnRules bool
	// Running says the run goes on: the cursor may follow it.
	Running bool
	// Ended says the run is over: the heading says when it ended.
	Ended bool
	// Selected is the replica the screen's fault keys act on (▸).
	Selected string
	// Reported is every replica as the run reports it now, which the
	// lanes' labels show while the cursor follows the run.
	Reported []history.ReplicaState
}

// Model is the timeline component. The zero value is not usable: make
// one with New.
type Model struct {
	// KeyMap is the bindings that move the cursor.
	KeyMap KeyMap

	styles        theme.Styles
	width, height int
	detail        int // lines for the cursor's item; 0: by the height
	run           Run
	cache         *cache // shared by the model's copies

	cursor int  // the item the cursor is on, unless live
	live   bool // the cursor follows the run
	notice string
}

// New is a timeline drawn with st, its cursor following the run.
func New(st theme.Styles) Model {
	return Model{KeyMap: DefaultKeyMap(), styles: st, width: 80, height: 8, live: true, cache: &cache{}}
}

// OfHistory is a finished run's timeline, its cursor on the first item
// from at on (a finding's time, named to the hundredth of a second), or
// on the last when at is negative. Its lanes are the replicas in the
// order the events first name them.
func OfHistory(st theme.Styles, events []history.Event, ownRules bool, at time.Duration) Model {
	return OfRun(st, Run{Events: events, Names: ReplicaNames(events), OwnRules: ownRules, Ended: true}, at)
}

// OfRun is OfHistory for a run whose lanes the caller orders (r.Names):
// a lab run's replicas by number, as its view lists them while it runs.
func OfRun(st theme.Styles, r Run, at time.Duration) Model {
	m := New(st)
	m.SetRun(r)
	tl := m.built()
	m.Seek(len(tl.items) - 1)
	if at >= 0 {
		for i := range tl.items {
			if tl.at(i) >= at-5*time.Millisecond {
				m.Seek(i)
				break
			}
		}
	}
	return m
}

// ReplicaNames is the replicas events name, in the order they first do,
// leaving out etcd's members.
func ReplicaNames(events []history.Event) []string {
	var names []string
	seen := map[string]bool{}
	for _, e := range events {
		if e.Replica != "" && !seen[e.Replica] && !etcdEvent(e.Kind) {
			seen[e.Replica] = true
			names = append(names, e.Replica)
		}
	}
	return names
}

// etcdEvent: the event is about an etcd member, not a replica.
func etcdEvent(k history.Kind) bool {
	return k == history.MemberStopped || k == history.MemberRestarted || k == history.LeaderMoved
}

// SetRun gives the timeline the run to draw; the columns are built again
// only when the history changed.
func (m *Model) SetRun(r Run) { m.run = r }

// SetStyles replaces the styles.
func (m *Model) SetStyles(st theme.Styles) { m.styles = st }

// SetSize gives the timeline its drawing area.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// SetDetail sets how many lines the text of the cursor's item may take;
// 0 leaves it to the height (two, one below ten lines).
func (m *Model) SetDetail(n int) { m.detail = n }

// Follow puts the cursor back on the run's newest item, following it.
func (m *Model) Follow() { m.cursor, m.live = 0, true }

// Seek puts the cursor on item i, which it stays on.
func (m *Model) Seek(i int) { m.cursor, m.live = i, false }

// Focus puts the cursor on the instant at the checker's verdict is about,
// as scenario.Focus gives it (m.Focus(scenario.Focus(&h))): on the
// finding of that instant, or on the last item when ok is false (the
// verdict points at nothing). The instant depends on the properties the
// run's scenario judges, which only the scenario knows.
func (m *Model) Focus(at time.Duration, ok bool) { m.Seek(m.built().focus(at, ok)) }

// Cursor is the item the cursor is on; -1 when there is none.
func (m Model) Cursor() int { return m.cursorOf(m.built()) }

// Following reports whether the cursor follows the run, which is going
// on: the view shows the run as it is now.
func (m Model) Following() bool { return m.live && m.run.Running }

// following is Following for the package's own drawing.
func (m Model) following() bool { return m.Following() }

// Len is the number of items (columns).
func (m Model) Len() int { return len(m.built().items) }

// Event is the first event of item i, and whether the item is that event
// alone rather than a fold of routine events.
func (m Model) Event(i int) (history.Event, bool) {
	tl := m.built()
	if i < 0 || i >= len(tl.items) {
		return history.Event{}, false
	}
	return tl.events[tl.items[i].first], tl.items[i].fold == nil
}

// TimeOf is when item i happened: the time of its last event.
func (m Model) TimeOf(i int) time.Duration { return m.built().at(i) }

// At is the time of the cursor's item; 0 when there is none.
func (m Model) At() time.Duration {
	tl := m.built()
	cur := m.cursorOf(tl)
	if cur < 0 {
		return 0
	}
	return tl.at(cur)
}

// Notice is what the last key could not do ("no violation ... so far"),
// "" when it did what it says.
func (m Model) Notice() string { return m.notice }

// Handles reports whether msg is one of the timeline's keys.
func (m Model) Handles(msg tea.KeyPressMsg) bool { return key.Matches(msg, m.KeyMap.all()...) }

// Update moves the cursor: ←/→ an item, home and end the ends (end
// follows a running run again), v the next violation or refusal.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	m.notice = ""
	tl := m.built()
	n := len(tl.items)
	if n == 0 {
		return m, nil
	}
	cur := m.cursorOf(tl)
	switch {
	case key.Matches(k, m.KeyMap.Earlier):
		m.cursor, m.live = max(0, cur-1), false
	case key.Matches(k, m.KeyMap.Later):
		m.cursor = min(n-1, cur+1)
		m.live = m.cursor == n-1 && m.run.Running
	case key.Matches(k, m.KeyMap.First):
		m.cursor, m.live = 0, false
	case key.Matches(k, m.KeyMap.Last):
		m.cursor, m.live = n-1, m.run.Running
	case key.Matches(k, m.KeyMap.NextKey):
		j := tl.nextKey(cur)
		if j < 0 {
			m.notice = "no violation or refused write in this run so far"
			return m, nil
		}
		m.cursor, m.live = j, false
	}
	return m, nil
}

// View draws the timeline in the size given by SetSize: a heading, the
// lanes with the ruler, the cursor's item in full and, where there is
// room, the items around it.
func (m Model) View() string {
	detail := m.detail
	if detail <= 0 {
		detail = 2
		if m.height < 10 {
			detail = 1
		}
	}
	return strings.Join(m.panel(m.width, m.height, detail), "\n")
}

// DetailLines is how many lines the cursor's item takes in full at width
// w (with the findings of its instant); 1 with no item.
func (m Model) DetailLines(w int) int {
	tl := m.built()
	if len(tl.items) == 0 {
		return 1
	}
	return len(tl.cursorLines(m.cursorOf(tl), w))
}

// cursorOf is the item the cursor is on in tl; -1 when it has none.
func (m Model) cursorOf(tl timeline) int {
	if len(tl.items) == 0 {
		return -1
	}
	if m.live || m.cursor >= len(tl.items) {
		return len(tl.items) - 1
	}
	return max(0, m.cursor)
}

// cache keeps the last timeline built, for the run it was built from: a
// view asks for it several times, and a tick often brings nothing new.
type cache struct {
	key buildKey
	tl  timeline
}

// buildKey says which run a timeline was built from: its events (the slice
// and how many), the replicas and which of them retired, and its rules.
type buildKey struct {
	first            *history.Event
	events, replicas int
	retired          string
	ownRules         bool
}

// built is the run's timeline, built once per run state.
func (m Model) built() timeline {
	var gone strings.Builder
	for _, n := range m.run.Names {
		if m.run.Retired[n] {
			gone.WriteString(n + " ")
		}
	}
	k := buildKey{events: len(m.run.Events), replicas: len(m.run.Names), retired: gone.String(), ownRules: m.run.OwnRules}
	if len(m.run.Events) > 0 {
		k.first = &m.run.Events[0]
	}
	if c := m.cache; c != nil && c.key == k {
		return c.tl
	}
	tl := buildTimeline(m.run.Events, m.run.Names, m.run.Retired, m.run.OwnRules)
	if m.cache != nil {
		*m.cache = cache{key: k, tl: tl}
	}
	return tl
}
