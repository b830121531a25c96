package timeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/text"
)

// The lanes: a row per replica and one for etcd, a column per timeline
// item, and a ruler with the cursor under them. A replica's row shows
// what it believed (owner ━, not owner ─, paused ▒, cut off ░, crashed ×,
// the token it won, ✓ accepted and ✗ refused writes, ! a violation the
// checker found: acting as owner while etcd held another's key, or a
// stale write taken; see markFindings); the
// etcd row shows who etcd held as owner (━, with the holder's name where
// it changes; · when it held nobody), when a member was down (▒) and
// where raft leadership moved to another member (⇄). The
// label before each row is the state at the cursor: belief in the
// replica rows, etcd's truth in its own.

// legend explains the lanes' marks, long to short, every form with
// every mark but the plainest (─); legendMoves with the mark of a raft
// leader move, for a timeline that has one.
var (
	legend = []string{
		"━ owner  ─ not owner  ◆ won (its token where it fits)  ▒ paused  ░ cut off  × crashed  ✓ write accepted  ✗ refused  ! violation",
		"━ owner  ─ not owner  ◆ won  ▒ paused  ░ cut off  × crashed  ✓ write accepted  ✗ refused  ! violation",
		"━ owner ─ other ◆ won ▒ paused ░ cut × crash ✓ accepted ✗ refused ! violation",
		"━ owner ◆ won ▒ paused ░ cut × crash ✓ ok ✗ refused ! violation",
	}
	legendMoves = []string{
		"━ owner  ─ not owner  ◆ won (its token where it fits)  ▒ paused  ░ cut off  × crashed  ✓ write accepted  ✗ refused  ! violation  ⇄ etcd leader moved",
		"━ owner  ─ not owner  ◆ won  ▒ paused  ░ cut off  × crashed  ✓ write accepted  ✗ refused  ! violation  ⇄ etcd leader moved",
		"━ owner ─ other ◆ won ▒ paused ░ cut × crash ✓ accepted ✗ refused ! violation ⇄ leader moved",
		"━ owner ◆ won ▒ paused ░ cut × crash ✓ ok ✗ refused ! violation ⇄ new leader",
	}
)

// laneRow is one lane: its label at the cursor and a mark per column.
type laneRow struct {
	label string
	cells []string
}

// window is the items the lanes show in width cols, around cursor cur:
// the cursor stays in view with a quarter of the width after it while
// there is more to see.
func window(n, cur, cols int) (first, last int) {
	if n <= cols {
		return 0, n
	}
	ahead := min(cols/4, n-1-cur)
	first = max(0, min(cur-(cols-1-ahead), n-cols))
	return first, first + cols
}

// replicaCells is lane l's marks for items first..last-1, k cells an
// item: the item's mark, then the state it leaves the replica in.
func replicaCells(tl timeline, l, first, last, k int) []string {
	cells := make([]string, 0, (last-first)*k)
	for i := first; i < last; i++ {
		s, t := tl.states[i][l], tl.at(i)
		cells = append(cells, replicaMark(s, t))
		s.wrote, s.refused, s.violated, s.acquired = false, false, false, false
		for range k - 1 {
			cells = append(cells, replicaMark(s, t))
		}
	}
	// The token a term was won with, over the term's first cells.
	for i := first; i < last; i++ {
		if s := tl.states[i][l]; s.acquired {
			writeOver(cells[(i-first)*k:], fmt.Sprint(s.token), "━")
		}
	}
	return cells
}

// replicaMark is the mark of a replica in state s at time t.
func replicaMark(s belief, t time.Duration) string {
	switch {
	case !s.seen || s.gone:
		return " "
	case s.violated:
		return "!"
	case s.refused:
		return "✗"
	case s.wrote:
		return "✓"
	case s.acquired:
		return "◆" // the token's digits replace it where they fit
	case s.crashed:
		return "×"
	case s.paused:
		return "▒"
	case s.cut || t < s.stalledUntil:
		return "░"
	case s.role == history.RoleOwner, s.role == history.RoleRaftLeader:
		return "━"
	}
	return "─"
}

// writeOver writes word over the first cells, when cells after the
// first that it needs are all plain (fill): a token or a holder's name
// where its term starts.
func writeOver(cells []string, word, fill string) {
	rs := []rune(word)
	if len(rs) > len(cells) {
		return
	}
	for j := 1; j < len(rs); j++ {
		if cells[j] != fill {
			return
		}
	}
	for j, r := range rs {
		cells[j] = string(r)
	}
}

// etcdCells is the etcd lane's marks for items first..last-1, k cells
// an item.
func etcdCells(tl timeline, first, last, k int) []string {
	cells := make([]string, 0, (last-first)*k)
	for i := first; i < last; i++ {
		h := tl.holds[i]
		mark := "━"
		switch {
		case h.down > 0:
			mark = "▒"
		case h.holder == "":
			mark = "·"
		}
		for range k {
			cells = append(cells, mark)
		}
	}
	for i := first; i < last; i++ {
		h := tl.holds[i]
		if h.holder != "" && (i == 0 || tl.holds[i-1].holder != h.holder) {
			writeOver(cells[(i-first)*k:], h.holder, "━")
		}
	}
	// A raft leader move over everything else: the leader-change
	// scenarios exist to show what follows it.
	for i := first; i < last; i++ {
		if tl.holds[i].moved {
			cells[(i-first)*k] = "⇄"
		}
	}
	return cells
}

// rulerCells marks the script's steps (|) and the cursor (▲ and its
// time) under the lanes, k cells an item.
func rulerCells(tl timeline, first, last, cur, k int) []string {
	cells := make([]string, (last-first)*k)
	for i := range cells {
		cells[i] = " "
	}
	for i := first; i < last; i++ {
		if tl.items[i].fold == nil && tl.events[tl.items[i].first].Kind == history.Phase {
			cells[(i-first)*k] = "|"
		}
	}
	at := []rune(fmt.Sprintf("%.2fs", tl.at(cur).Seconds()))
	c := (cur - first) * k
	cells[c] = "▲"
	start := c + 1
	if start+len(at) > len(cells) {
		start = c - len(at)
	}
	if start >= 0 {
		for j, r := range at {
			cells[start+j] = string(r)
		}
	}
	return cells
}

// cellsPerItem is how many cells an item gets in cols: more than one on
// a wide screen with room to spare, so tokens and names fit.
func cellsPerItem(items, cols int) int {
	if items == 0 {
		return 1
	}
	return max(1, min(3, cols/items))
}

// renderLanes lays rows out as label, space, marks, in w cells.
func renderLanes(rows []laneRow, w int) []string {
	labelW := 0
	for _, r := range rows {
		labelW = max(labelW, ansi.StringWidth(r.label))
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		line := r.label + text.Spaces(labelW-ansi.StringWidth(r.label)) + " " + strings.Join(r.cells, "")
		out[i] = strings.TrimRight(ansi.Truncate(line, w, ""), " ")
	}
	return out
}

// labelWidth is the width the lanes give their labels at screen width w:
// a fifth, or more on a wide screen, which has room for long labels.
func labelWidth(w int) int {
	if w >= 150 {
		return 60
	}
	if w >= 110 {
		return 30
	}
	return 26
}
