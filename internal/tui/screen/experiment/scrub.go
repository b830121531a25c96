package experiment

import (
	"fmt"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/history"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/tui/text"
)

// Scrubbing: the cursor is on the newest item while a run is live (it
// follows the run), or on the item the learner moved it to. The lanes'
// labels, the replica cards, "etcd holds" and the resource line show the
// state at the cursor.

// timelineCache keeps the last timeline built, for the snapshot it was
// built from: a view asks for it several times, and a tick often brings
// nothing new.
type timelineCache struct {
	key timelineKey
	tl  timeline
}

// timelineKey says which snapshot a timeline was built from: its events
// (the slice and how many) and the replicas and which of them retired.
type timelineKey struct {
	first            *history.Event
	events, replicas int
	retired          string
}

// timeline is the snapshot's timeline, built once per snapshot.
func (m Model) timeline() timeline {
	var names []string
	retired := map[string]bool{}
	var gone strings.Builder
	for _, r := range m.snap.all {
		names = append(names, r.Name)
		if retired[r.Name] = r.Role == experiment.RoleRetired; retired[r.Name] {
			gone.WriteString(r.Name + " ")
		}
	}
	if len(names) == 0 {
		for _, r := range m.snap.replicas {
			names = append(names, r.Name)
		}
	}
	key := timelineKey{events: len(m.snap.events), replicas: len(names), retired: gone.String()}
	if len(m.snap.events) > 0 {
		key.first = &m.snap.events[0]
	}
	if c := m.tlc; c != nil && c.key == key {
		return c.tl
	}
	tl := buildTimeline(m.snap.events, names, retired, m.ownRules || (m.sc != nil && m.sc.OwnRules))
	if m.tlc != nil {
		*m.tlc = timelineCache{key: key, tl: tl}
	}
	return tl
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

// isLive reports whether the screen shows the run as it is now: the
// cursor follows a running run.
func (m Model) isLive() bool { return m.live && m.phase == phaseRunning }

// scrubKey moves the cursor: ←/→ an item, home and end the ends (end
// follows a running run again), v the next violation or refusal.
func (m Model) scrubKey(msg tea.KeyPressMsg) (Model, bool) {
	k := m.keys
	tl := m.timeline()
	n := len(tl.items)
	if n == 0 {
		return m, key.Matches(msg, k.Earlier, k.Later, k.First, k.Last, k.NextKey)
	}
	cur := m.cursorOf(tl)
	switch {
	case key.Matches(msg, k.Earlier):
		m.cursor, m.live = max(0, cur-1), false
	case key.Matches(msg, k.Later):
		m.cursor = min(n-1, cur+1)
		m.live = m.cursor == n-1 && m.phase == phaseRunning
	case key.Matches(msg, k.First):
		m.cursor, m.live = 0, false
	case key.Matches(msg, k.Last):
		m.cursor, m.live = n-1, m.phase == phaseRunning
	case key.Matches(msg, k.NextKey):
		j := tl.nextKey(cur)
		if j < 0 {
			m.notice = "no violation or refused write in this run so far"
			return m, true
		}
		m.cursor, m.live = j, false
	default:
		return m, false
	}
	return m, true
}

// stateWord is a replica's state in a word or two: how it is held first,
// then its role.
func stateWord(b belief, t time.Duration) string {
	switch {
	case !b.seen:
		return "not started"
	case b.gone:
		return "retired"
	case b.crashed:
		return "crashed"
	case b.paused:
		return "paused"
	case b.cut:
		return "cut off"
	case t < b.stalledUntil:
		return "stalled"
	case b.role == "":
		return "follower"
	}
	return string(b.role)
}

// liveBelief is a replica's state as the run reports it now, in the
// timeline's terms.
func liveBelief(r experiment.ReplicaState) belief {
	return belief{seen: true, role: r.Role, token: r.Token, paused: r.Paused, cut: r.Partitioned,
		crashed: r.Crashed && r.Role != experiment.RoleRetired, gone: r.Role == experiment.RoleRetired,
		leased: r.LeaseTTL > 0, ttl: r.LeaseTTL, clock: r.ClockRate}
}

// historyRole is r with the role and token the history gives it in
// state b: what a label and a card call a replica comes from one rule,
// the timeline's (its own events, and a key of its that etcd holds in a
// line), live or scrubbed. The run's report keeps what the history has
// not said yet: a replica with no event so far, and one being crashed
// or retired.
func historyRole(r experiment.ReplicaState, b belief) experiment.ReplicaState {
	if !b.seen || r.Crashed || r.Role == experiment.RoleRetired || r.Role == experiment.RoleCrashed {
		return r
	}
	r.Role, r.Token = roleOf(b), b.token
	return r
}

// laneOf is the lane of the replica named name, -1 if none.
func (tl timeline) laneOf(name string) int {
	for l, n := range tl.lanes {
		if n == name {
			return l
		}
	}
	return -1
}

// beliefAt is replica lane l's state at item cur, and the lease time it
// believes it has: the run's own report when live, with its role by the
// history (historyRole).
func (m Model) beliefAt(tl timeline, l, cur int) (belief, time.Duration) {
	if m.isLive() {
		for _, r := range append(m.snap.all, m.snap.replicas...) {
			if r.Name == tl.lanes[l] {
				return liveBelief(historyRole(r, tl.states[cur][l])), r.LeaseLeft
			}
		}
	}
	b := tl.states[cur][l]
	return b, b.leaseLeft(tl.at(cur))
}

// replicaLabel is lane l's label at the cursor in at most w cells: the
// selection mark, the name, what it believes (its state, token and lease
// left) and, when it believes it owns what etcd gives another, that etcd
// disagrees. Short of room, the lease goes first, then the token.
func (m Model) replicaLabel(tl timeline, l, cur, w int) string {
	b, left := m.beliefAt(tl, l, cur)
	name := tl.lanes[l]
	mark := " "
	if m.selected() == name {
		mark = "▸"
	}
	word := stateWord(b, tl.at(cur))
	if b.role == experiment.RoleOwner && word != string(b.role) && !b.gone {
		word += " owner" // paused, cut off or stalled, it still believes it owns
	}
	var tok, lease, conflict [2]string // long and short forms
	if b.token > 0 && !b.gone && !b.crashed {
		tok = [2]string{fmt.Sprintf(" · token %d", b.token), fmt.Sprintf(" t%d", b.token)}
	}
	if b.leased && !b.gone && !b.crashed && (left > 0 || b.role == experiment.RoleOwner) {
		lease = [2]string{" · lease " + history.LeftLabel(left), fmt.Sprintf(" %.1fs", left.Seconds())}
	}
	if h := tl.holds[cur]; b.role == experiment.RoleOwner && !b.gone && h.rev > 0 && (h.holder != name && h.queue || len(h.keys) == 0) {
		holder := h.holder
		if len(h.keys) == 0 {
			holder = "nobody"
		}
		conflict = [2]string{" · etcd holds " + holder, " ≠etcd"}
	}
	head := mark + name + " " + word
	return text.FirstFit(w,
		head+tok[0]+lease[0]+conflict[0],
		head+tok[1]+conflict[1]+lease[1],
		head+tok[1]+conflict[1],
		head+conflict[1],
		head, mark+name)
}

// etcdLabel is the etcd lane's label at the cursor: who etcd held as
// owner, at which revision.
func (m Model) etcdLabel(tl timeline, cur, w int) string {
	h := tl.holds[cur]
	who := h.holder
	if who == "" {
		who = "nobody"
	}
	long := fmt.Sprintf(" etcd holds %s · revision %d", who, h.rev)
	if len(h.keys) > 1 {
		long += fmt.Sprintf(" · %d keys", len(h.keys))
	}
	if h.down > 0 {
		long += fmt.Sprintf(" · %d member(s) down", h.down)
	}
	if h.leader != "" {
		long += " · raft leader " + h.leader
	}
	return text.FirstFit(w, long, fmt.Sprintf(" etcd %s rev %d", who, h.rev), " etcd "+who, " etcd")
}

// selected is the name of the replica fault keys act on.
func (m Model) selected() string {
	if m.sel < len(m.snap.replicas) {
		return m.snap.replicas[m.sel].Name
	}
	return ""
}

// cardStates are the replica cards at the cursor: the run's own report
// when live, else each card's replica as the timeline has it then.
func (m Model) cardStates() []experiment.ReplicaState {
	tl := m.timeline()
	cur := m.cursorOf(tl)
	if cur < 0 {
		return m.snap.replicas
	}
	if m.isLive() {
		out := make([]experiment.ReplicaState, len(m.snap.replicas))
		for i, r := range m.snap.replicas {
			out[i] = r
			if l := tl.laneOf(r.Name); l >= 0 {
				out[i] = historyRole(r, tl.states[cur][l])
			}
		}
		return out
	}
	var out []experiment.ReplicaState
	for l, name := range tl.lanes {
		b := tl.states[cur][l]
		if !b.seen || b.gone {
			continue
		}
		out = append(out, experiment.ReplicaState{Name: name, Role: roleOf(b), Token: b.token, LeaseTTL: b.ttl * boolInt(b.leased),
			LeaseLeft: b.leaseLeft(tl.at(cur)), Paused: b.paused, Partitioned: b.cut, Crashed: b.crashed, ClockRate: b.clock})
	}
	return out
}

// roleOf is the role a card shows for b.
func roleOf(b belief) experiment.Role {
	if b.role == "" {
		return experiment.RoleFollower
	}
	return b.role
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
