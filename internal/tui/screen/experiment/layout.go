package experiment

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/text"
)

// cardsMinHeight is the height from which the boxed replica cards come
// back above the lanes; below it the lanes' labels are the cards.
const cardsMinHeight = 30

// View draws the screen in the size given by SetSize.
func (m Model) View() string {
	w, h := max(m.Width, 40), max(m.Height, 12)
	st := m.Styles
	if m.sc == nil {
		return st.Error.Render(text.Wrap(m.err.Error(), w))
	}
	if v := m.sharedView(w); v != "" {
		return v
	}
	lines := m.header(w)
	if m.phase == phasePredict {
		lines = append(lines, m.predictPanel(w, h-len(lines))...)
	} else {
		lines = append(lines, m.body(w, h-len(lines))...)
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

// header is where the run happens, the experiment's name, the faults it
// injects (not what comes of them: that is for the learner to predict),
// and the run's state.
func (m Model) header(w int) []string {
	st := m.Styles
	faults := m.sc.Faults
	yours := []string{"Faults it injects: " + faults + "; add yours: tab picks a replica, then p c x r s",
		"Faults it injects: " + faults + "; add yours with p c x r s"}
	if m.sc.NoReplicas {
		yours = nil // no replica for the keys to act on
	}
	return []string{
		st.Muted.Render(text.CutWords("Runs on "+m.on, w)),
		st.Title.Render("Experiment: "+m.sc.Name) + st.Muted.Render(text.CutWords(" · "+m.sc.Title, w-len("Experiment: "+m.sc.Name))),
		st.Subtitle.Render(text.FirstFit(w, append(yours,
			"Faults it injects: "+faults,
			text.CutWords("Faults: "+faults, w))...)),
		m.statusLine(w),
	}
}

// body is everything under the header once the prediction is made:
// the state (cards, etcd, resource), what the learner must do, the
// timeline, the step the script waits at and the result.
func (m Model) body(w, n int) []string {
	st := m.Styles
	var notes []string
	if m.notice != "" {
		notes = append(notes, st.Warning.Render(text.CutWords(m.notice, w)))
	} else if s := m.stalled(w); s != "" {
		for _, l := range text.ClampWords(s, w, 2) {
			notes = append(notes, st.Warning.Render(l))
		}
	}
	if m.err != nil {
		for _, l := range text.ClampWords("error: "+m.err.Error(), w, 3) {
			notes = append(notes, st.Error.Render(l))
		}
	}
	var pin, result []string
	if p := m.stepPin(w); p != "" {
		pin = []string{p}
	}
	if c := m.clockLine(w); c != "" {
		pin = append(pin, c)
	}
	// The cursor's item in full, with the findings of its instant.
	detail := m.timeline().DetailLines(w)
	timelineMin := 1 + min(4, m.laneCount()) + 2 + detail
	if m.phase == phaseDone {
		// etcd's line and the resource keep their lines too: cut, they
		// said less than the timeline's extra lines give up.
		stateNeed := len(m.stateRows(w, n, n))
		room, short := m.resultRoom(w, n-len(notes)-len(pin)-stateNeed, timelineMin)
		if short {
			// The verdict says it; the cursor's item can wait.
			detail, timelineMin = 0, timelineFloor(m.laneCount())
		}
		result = m.resultPanel(w, room)
		result = append(result, m.savedLine(w, n)...)
	}
	state := m.stateRows(w, n, n-len(notes)-len(pin)-len(result)-timelineMin)
	out := append(state, notes...)
	out = append(out, m.timelinePanel(w, n-len(out)-len(pin)-len(result), detail)...)
	out = append(out, pin...)
	return append(out, result...)
}

// resultRoom is how many of n lines the finished run's result gets:
// what its sentences need whole, as the timeline's full height allows,
// and past that (short) up to what they need while the timeline keeps
// its heading, two lanes, etcd's and the ruler (the learner can scroll
// the timeline, not the verdict); at least 3.
func (m Model) resultRoom(w, n, timelineMin int) (room int, short bool) {
	need := len(m.resultPanel(w, 1000))
	if room := n - timelineMin; need <= room+1 {
		// One line short, the pick keeps to one line.
		return max(3, min(need, room)), false
	}
	return max(3, min(need, n-timelineFloor(m.laneCount()))), true
}

// timelineFloor is the fewest lines the timeline keeps beside a result
// that needs the rest: its heading, two of lanes, etcd's and the ruler.
func timelineFloor(lanes int) int { return 1 + min(2, lanes) + 2 }

// savedLine says where the finished run's history went, on a screen with
// a line to spare for it (the footer says "history saved" in any case).
func (m Model) savedLine(w, n int) []string {
	if m.phase != phaseDone || m.saved == "" || n < cardsMinHeight {
		return nil
	}
	return []string{m.Styles.Muted.Render(text.FirstFit(w,
		"saved: "+m.saved+" (playground experiment replay FILE)", "saved: "+m.saved, "saved: "+filepath.Base(m.saved)))}
}

// laneCount is how many replica lanes the timeline could draw.
func (m Model) laneCount() int { return max(1, len(m.snap.all), len(m.snap.replicas)) }

// stateRows are the cards, etcd's holdings and the resource, in at most
// room lines (fewer when short: the lanes' labels carry the same state).
func (m Model) stateRows(w, h, room int) []string {
	var out []string
	if h >= cardsMinHeight && room >= 8 {
		out = m.cardsAndStore(w, h)
	} else if room > 1 {
		out = m.storeRowsAt(w, min(storeRows(h), room-1))
	}
	if m.sc.Resource && len(out) < room {
		out = append(out, m.resourceLine(w))
	}
	if len(out) > max(room, 0) {
		out = out[:max(room, 0)]
	}
	return out
}

// stepPin is the step the script waits at, and when auto-play takes it.
func (m Model) stepPin(w int) string {
	if m.phase != phaseRunning || !m.snap.atStep || m.snap.pending == "" {
		return ""
	}
	step := m.snap.pending
	head := "▶ next step (space): "
	if m.auto() {
		head = fmt.Sprintf("▶ next step in %d s (space: now): ", int(m.nextStepIn().Seconds()+0.999))
	}
	return m.Styles.Accent.Render(text.CutWords(head+step, w))
}

// clockLine says, while the script waits for the learner, which leases
// etcd is counting down with nobody renewing them: the wait is part of
// the story then ("p2's lease: 7.0s left, not renewed"). "" when no
// lease races.
func (m Model) clockLine(w int) string {
	if m.phase != phaseRunning || !m.snap.atStep {
		return ""
	}
	s := m.snap.store
	renewed := lastRenewals(m.snap.events)
	var parts []string
	for _, k := range s.Keys {
		l, ok := s.Leases[k.Lease]
		if !ok || l.Gone || k.Lease == 0 || slices.Contains(parts, k.Value) {
			continue
		}
		if at, ok := renewed[k.Value]; ok && m.now().Sub(m.started)-at < time.Second {
			continue // its owner keeps it alive
		}
		left := l.Left - m.now().Sub(s.At)
		parts = append(parts, fmt.Sprintf("%s's lease: %s", k.Value, history.LeftLabel(left)))
	}
	if len(parts) == 0 {
		return ""
	}
	list := strings.Join(parts, ", ")
	return m.Styles.Warning.Render(text.FirstFit(w,
		"While you read, etcd's clock runs: "+list+", not renewed",
		"Clock running: "+list, text.CutWords(list, w)))
}

// lastRenewals is when each replica last had a lease granted or renewed.
func lastRenewals(events []history.Event) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, e := range events {
		if e.Kind == history.LeaseGranted || e.Kind == history.LeaseRenewed {
			out[e.Replica] = e.At
		}
	}
	return out
}

// timelinePanel is the timeline in at most n lines of w cells; detail is
// how many lines the text of the cursor's item may take.
func (m Model) timelinePanel(w, n, detail int) []string {
	t := m.timeline()
	t.SetSize(w, n)
	t.SetDetail(detail)
	if v := t.View(); v != "" {
		return strings.Split(v, "\n")
	}
	return nil
}
