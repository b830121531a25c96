package faults

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/tui/text"
	"github.com/ownership-election/playground/internal/tui/timeline"
)

// The picture of a run of the learner's code, while it goes on and once
// it has ended: the timeline the experiment screen draws (a lane per
// replica with what it believes, etcd's lane with whose key etcd holds
// and the raft leader where the run moved it), built from the events the
// child has reported so far, and, where there is room, the replica cards
// at the cursor, each with the etcd keys whose value names it. All of it
// comes from the events: a replica is drawn once it has said something,
// and a key is under the replica etcd's watch saw it hold, never under
// the one the schedule aims at.

// cardsMinLines is the fewest lines the picture needs to draw cards as
// well as the timeline: the cards and their keys take six, and the
// timeline keeps its heading, three lanes, etcd's, the ruler, the
// cursor's item, the legend and several items around it. The lanes'
// labels say what the cards say, so a short screen (80x24, where the
// view has under 20 lines) keeps the lanes, as the experiment screen
// does below 30 lines.
const cardsMinLines = 6 + 16

// liveEvery is how often the live timeline takes the events that came:
// it is built again from all of them each time (a run of lab 09 has
// thousands, 20 ms a build on a loaded machine), so taking each one as
// it came slowed the view to well behind the run. Ten times a second is
// as often as the experiment screen draws a run.
const liveEvery = 100 * time.Millisecond

// laneNames are the run's lanes: its replicas by number (as tab picks
// them), then anything else its events name.
func laneNames(events []history.Event) []string {
	names := runReplicas(events)
	for _, n := range timeline.ReplicaNames(events) {
		if !replicaName.MatchString(n) {
			names = append(names, n)
		}
	}
	return names
}

// follow gives the live timeline of running run r its events so far and
// the replica the fault keys act on.
func (m *Model) follow(r *faultRun) {
	if r.live == nil {
		v := timeline.New(m.styles)
		r.live = &v
	}
	sel, _, _ := r.picked()
	r.live.SetRun(timeline.Run{Events: r.events, Names: laneNames(r.events), OwnRules: true, Running: true, Selected: sel})
	r.followed, r.followedLen = m.opts.Now(), len(r.events)
}

// CatchUp gives the live timeline of the run in flight the events that
// came since it last took some (they are taken at most every liveEvery
// as they come): the lab screen calls it at each turn of its spinner,
// so the last events of a quiet moment are drawn too.
func (m *Model) CatchUp() {
	if r := m.runs[m.showing]; r != nil && !r.done && r.live != nil && r.followedLen < len(r.events) {
		m.follow(r)
	}
}

// finishedTimeline is the ended run's timeline of h's events, its cursor
// at the violation's instant (negative: the last item).
func (m *Model) finishedTimeline(events []history.Event, scenario string, at time.Duration) *timeline.Model {
	v := timeline.OfRun(m.styles, timeline.Run{Events: events, Names: laneNames(events), OwnRules: labrun.IsLabRun(scenario), Ended: true}, at)
	return &v
}

// picture is timeline v in at most h lines of w cells, under the cards
// and their keys where h leaves room for both.
func (m Model) picture(v *timeline.Model, selected string, w, h int) []string {
	if v == nil || h <= 0 {
		return nil
	}
	var out []string
	if h >= cardsMinLines {
		out = m.cards(*v, selected, w)
	} else if l := m.heldLine(*v, w); l != "" && h >= 8 {
		out = append(out, l)
	}
	t := *v
	t.SetSize(w, h-len(out))
	return append(out, strings.Split(t.View(), "\n")...)
}

// cards are the replicas at the timeline's cursor, a card each as the
// experiment screen draws them, and under each the keys etcd held with
// its name then: as many cards as fit in w.
func (m Model) cards(v timeline.Model, selected string, w int) []string {
	rs := v.Cards(nil)
	if len(rs) == 0 {
		return nil
	}
	rs = rs[:min(len(rs), max(1, w/timeline.CardWidth))]
	_, keys, _, _ := v.Held()
	var boxes []string
	var under strings.Builder
	for _, r := range rs {
		boxes = append(boxes, timeline.Card(m.styles, r, r.Name == selected))
		cell := " " + keysOf(keys, r.Name, timeline.CardWidth-2)
		under.WriteString(cell + text.Spaces(timeline.CardWidth-ansi.StringWidth(cell)))
	}
	out := strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, boxes...), "\n")
	return append(out, m.styles.Muted.Render(strings.TrimRight(under.String(), " ")))
}

// keysOf says, in at most w cells, which of keys etcd held with name as
// its value: the key (its group, then as much of its end as fits: an
// election's keys differ only there), or how many and their last parts;
// "no key in etcd" when none.
func keysOf(keys []history.StoreKey, name string, w int) string {
	var mine []string
	for _, k := range keys {
		if k.Value == name {
			mine = append(mine, k.Key)
		}
	}
	switch len(mine) {
	case 0:
		return "no key in etcd"
	case 1:
		return shortKey(mine[0], w)
	}
	for i, k := range mine {
		mine[i] = k[strings.LastIndexByte(k, '/')+1:]
	}
	return ansi.Truncate(fmt.Sprintf("%d keys: %s", len(mine), strings.Join(mine, " ")), w, "…")
}

// shortKey is key in at most w cells: whole, or its group and the end of
// its last part ("election/…b378ff0c").
func shortKey(key string, w int) string {
	if len(key) <= w {
		return key
	}
	dir, last := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 && i+1 <= w/2 {
		dir, last = key[:i+1], key[i+1:]
	}
	keep := max(w-len(dir)-1, 1)
	return dir + "…" + last[max(len(last)-keep, 0):]
}

// heldLine is, on a screen too short for cards, whose keys etcd held at
// the cursor, each under the replica its value names: "etcd at 4.20s:
// r2 election/…0a · r3 election/…0f"; "" before the watch saw any.
func (m Model) heldLine(v timeline.Model, w int) string {
	_, keys, at, ok := v.Held()
	if !ok {
		return ""
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, k.Value+" "+k.Key)
	}
	if len(parts) == 0 {
		parts = []string{"no key"}
	}
	head := fmt.Sprintf("etcd at %.2fs: ", at.Seconds())
	return m.styles.Heading.Render(head) + m.styles.Muted.Render(ansi.Truncate(strings.Join(parts, " · "), max(w-len(head), 1), "…"))
}
