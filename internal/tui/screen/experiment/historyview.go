package experiment

import (
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/theme"
)

// HistoryView is a finished run's history drawn with this screen's
// timeline (a lane per replica and one for etcd, the cursor's item in
// words, the items around it), for another screen to embed: the lab
// screen shows a run of the learner's own code with it. The keys are the
// timeline's: ←/→ an item, home/end the ends, v the next violation.
type HistoryView struct {
	m Model
}

// NewHistoryView opens h's timeline at the first item from at on (the
// verdict's violation, named to the hundredth of a second), or at the end
// when at is negative.
func NewHistoryView(st theme.Styles, h history.History, at time.Duration) HistoryView {
	m := Model{Base: screen.NewBase(screen.Context{Styles: st}), keys: DefaultKeyMap(), picked: -1, now: time.Now,
		phase: phaseDone, tlc: &timelineCache{}, ownRules: labrun.IsLabRun(h.Scenario)}
	m.snap.events = h.Events
	m.snap.verdict = h.Verdict
	seen := map[string]bool{}
	for _, e := range h.Events {
		if e.Replica != "" && !seen[e.Replica] && !etcdEvent(e.Kind) {
			seen[e.Replica] = true
			m.snap.all = append(m.snap.all, experiment.ReplicaState{Name: e.Replica})
		}
	}
	tl := m.timeline()
	m.cursor = len(tl.items) - 1
	if at >= 0 {
		for i := range tl.items {
			if tl.at(i) >= at-5*time.Millisecond {
				m.cursor = i
				break
			}
		}
	}
	return HistoryView{m: m}
}

// etcdEvent: the event is about an etcd member, not a replica.
func etcdEvent(k history.Kind) bool {
	return k == history.MemberStopped || k == history.MemberRestarted || k == history.LeaderMoved
}

// SetStyles replaces the styles.
func (v *HistoryView) SetStyles(st theme.Styles) { v.m.Styles = st }

// Update moves the cursor; it reports whether the key was the view's.
func (v HistoryView) Update(msg tea.KeyPressMsg) (HistoryView, bool) {
	m, used := v.m.scrubKey(msg)
	m.notice = ""
	v.m = m
	return v, used
}

// View draws the timeline in at most h lines of w cells.
func (v HistoryView) View(w, h int) string {
	v.m.Width, v.m.Height = w, h
	detail := 2
	if h < 10 {
		detail = 1
	}
	return strings.Join(v.m.timelinePanel(w, h, detail), "\n")
}

// At is the time of the cursor's item.
func (v HistoryView) At() time.Duration {
	tl := v.m.timeline()
	cur := v.m.cursorOf(tl)
	if cur < 0 {
		return 0
	}
	return tl.at(cur)
}

// Keys are the view's bindings, for the embedding screen's help.
func (v HistoryView) Keys() []key.Binding {
	k := v.m.keys
	return []key.Binding{k.Earlier, k.First, k.NextKey}
}
