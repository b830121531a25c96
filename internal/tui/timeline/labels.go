package timeline

import (
	"fmt"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/text"
)

// The lanes' labels and the cards say what each replica believed at the
// cursor: from the history when the cursor is on an earlier item, from
// the run's own report while it follows the run, with the role by the
// history either way.

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
func liveBelief(r history.ReplicaState) belief {
	return belief{seen: true, role: r.Role, token: r.Token, paused: r.Paused, cut: r.Partitioned,
		crashed: r.Crashed && r.Role != history.RoleRetired, gone: r.Role == history.RoleRetired,
		leased: r.LeaseTTL > 0, ttl: r.LeaseTTL, clock: r.ClockRate}
}

// historyRole is r with the role and token the history gives it in
// state b: what a label and a card call a replica comes from one rule,
// the timeline's (its own events, and a key of its that etcd holds in a
// line), live or scrubbed. The run's report keeps what the history has
// not said yet: a replica with no event so far, and one being crashed
// or retired.
func historyRole(r history.ReplicaState, b belief) history.ReplicaState {
	if !b.seen || r.Crashed || r.Role == history.RoleRetired || r.Role == history.RoleCrashed {
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
	if m.following() {
		for _, r := range m.run.Reported {
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
	if m.run.Selected == name {
		mark = "▸"
	}
	word := stateWord(b, tl.at(cur))
	if b.role == history.RoleOwner && word != string(b.role) && !b.gone {
		word += " owner" // paused, cut off or stalled, it still believes it owns
	}
	var tok, lease, conflict [2]string // long and short forms
	switch {
	case b.member && b.term > 0:
		tok = [2]string{fmt.Sprintf(" · term %d", b.term), fmt.Sprintf(" term %d", b.term)}
	case b.token > 0 && !b.gone && !b.crashed:
		tok = [2]string{fmt.Sprintf(" · token %d", b.token), fmt.Sprintf(" t%d", b.token)}
	}
	if b.leased && !b.gone && !b.crashed && (left > 0 || b.role == history.RoleOwner) {
		lease = [2]string{" · lease " + history.LeftLabel(left), fmt.Sprintf(" %.1fs", left.Seconds())}
	}
	if h := tl.holds[cur]; b.role == history.RoleOwner && !b.gone && h.rev > 0 && (h.holder != name && h.queue || len(h.keys) == 0) {
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
// owner, at which revision, and the raft leader once the run saw one.
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
		if h.rev == 0 && len(h.keys) == 0 {
			// A run of members, not keys: the leader is etcd's news.
			return text.FirstFit(w, " etcd raft leader "+h.leader, " etcd leader "+h.leader, " etcd")
		}
	}
	short := fmt.Sprintf(" etcd %s rev %d", who, h.rev)
	if h.leader != "" {
		// Short of room, the raft leader says more than the revision:
		// a run that moves it exists to show what follows.
		short = fmt.Sprintf(" etcd %s · raft leader %s", who, h.leader)
	}
	return text.FirstFit(w, long, short, " etcd "+who, " etcd")
}

// Cards are the replica cards at the cursor: cards, the run's own
// report, with their roles by the history (historyRole) while the cursor
// follows the run; else, or when the run reports none (a lab run, whose
// replicas are processes that only send events), every replica as the
// timeline has it then.
func (m Model) Cards(cards []history.ReplicaState) []history.ReplicaState {
	tl := m.built()
	cur := m.cursorOf(tl)
	if cur < 0 {
		return cards
	}
	if m.following() && len(cards) > 0 {
		out := make([]history.ReplicaState, len(cards))
		for i, r := range cards {
			out[i] = r
			if l := tl.laneOf(r.Name); l >= 0 {
				out[i] = historyRole(r, tl.states[cur][l])
			}
		}
		return out
	}
	var out []history.ReplicaState
	for l, name := range tl.lanes {
		b := tl.states[cur][l]
		if !b.seen || b.gone {
			continue
		}
		out = append(out, history.ReplicaState{Name: name, Role: roleOf(b), Token: b.token, LeaseTTL: b.ttl * boolInt(b.leased),
			LeaseLeft: b.leaseLeft(tl.at(cur)), Paused: b.paused, Partitioned: b.cut, Crashed: b.crashed, ClockRate: b.clock,
			Member: b.member, Term: b.term})
	}
	return out
}

// roleOf is the role a card shows for b.
func roleOf(b belief) history.Role {
	if b.role == "" {
		return history.RoleFollower
	}
	return b.role
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Held is what etcd held at the cursor, by the run's watch: the
// revision of the last change seen and the keys, with the cursor's time;
// ok is false when there is no item or no change seen yet.
func (m Model) Held() (rev int64, keys []history.StoreKey, at time.Duration, ok bool) {
	tl := m.built()
	cur := m.cursorOf(tl)
	if cur < 0 || tl.holds[cur].rev == 0 {
		return 0, nil, 0, false
	}
	h := tl.holds[cur]
	return h.rev, h.keys, tl.at(cur), true
}

// Resource is the protected resource at the cursor, as the history's
// writes left it; ok is false while the cursor follows the run (the run's
// own report is newer) or when there is no item.
func (m Model) Resource() (history.ResourceState, bool) {
	if m.following() {
		return history.ResourceState{}, false
	}
	tl := m.built()
	if cur := m.cursorOf(tl); cur >= 0 {
		return tl.res[cur], true
	}
	return history.ResourceState{}, false
}
