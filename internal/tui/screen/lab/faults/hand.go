package faults

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

// Faults by hand: while a run goes on, tab picks a replica and p, x, c
// and r do to it what the experiment screen's keys do to its replicas
// (pause or resume, cut off or heal, crash, restart). The run is in the
// child process, so a key becomes a line on its standard input
// (experiment run --control), and what the replica then did comes back
// as its events, like everything else the screen shows. The by-hand
// schedule does nothing of its own and goes on until e sends the child
// end. The lines are labrun's control lines (labrun.ControlLine, read
// by labrun.Control in the child), and go through controlPipe, never
// written in Update.

// HandKeys are the bindings of faults by hand; End ends a run of the
// by-hand schedule, which goes on until it does.
type HandKeys struct {
	Pick    key.Binding
	Pause   key.Binding
	Cut     key.Binding
	Crash   key.Binding
	Restart key.Binding
	End     key.Binding
}

func defaultHandKeys() HandKeys {
	return HandKeys{
		Pick:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "replica")),
		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Cut:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "cut off")),
		Crash:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "crash")),
		Restart: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart")),
		End:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "end run")),
	}
}

// controlBuffer is how many lines may wait for a child that is slow to
// read them: more keys than anyone presses while a run reads its input.
const controlBuffer = 16

// controlPipe is a child's standard input, written by a goroutine of its
// own: Update hands it a line and returns, whether the child reads its
// input or not (a write to a pipe nobody reads waits for ever). The
// goroutine ends once the pipe is closed or the run's context is done.
type controlPipe struct {
	lines  chan string
	mu     sync.Mutex
	closed bool
}

func newControlPipe(ctx context.Context, w io.WriteCloser) *controlPipe {
	p := &controlPipe{lines: make(chan string, controlBuffer)}
	go p.write(ctx, w)
	return p
}

// write writes each line to w until the pipe is closed; once a write
// fails (the child has ended) the rest are dropped.
func (p *controlPipe) write(ctx context.Context, w io.WriteCloser) {
	defer w.Close()
	var failed error
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return
			}
			if failed == nil {
				_, failed = io.WriteString(w, l+"\n")
			}
		case <-ctx.Done():
			return
		}
	}
}

// send hands line to the writer; false when it cannot take it (the child
// has not read the lines before it, or the run has ended).
func (p *controlPipe) send(line string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	select {
	case p.lines <- line:
		return true
	default:
		return false
	}
}

// close ends the writer once the lines sent are written.
func (p *controlPipe) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.lines)
	}
}

// replicaName is a lab run's replica ("r2"), not an etcd member.
var replicaName = regexp.MustCompile(`^r([0-9]+)$`)

// runReplicas are the replicas the run's events name so far, by number.
func runReplicas(events []history.Event) []string {
	var out []string
	for _, e := range events {
		if replicaName.MatchString(e.Replica) && !slices.Contains(out, e.Replica) {
			out = append(out, e.Replica)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return replicaNumber(a) - replicaNumber(b) })
	return out
}

func replicaNumber(name string) int {
	n, _ := strconv.Atoi(replicaName.FindStringSubmatch(name)[1])
	return n
}

// handState is what the replica's events say the faults left it: held
// paused, cut off, crashed.
type handState struct{ paused, cut, crashed bool }

// after is s once event e of its replica happened.
func (s handState) after(e history.Event) handState {
	switch e.Kind {
	case history.Paused, history.Resumed:
		s.paused = e.Kind == history.Paused
	case history.Partitioned, history.Healed:
		s.cut = e.Kind == history.Partitioned
	case history.Crashed:
		s = handState{crashed: true}
	case history.Restarted:
		s.crashed = false
	}
	return s
}

// handSeen is what the fault keys know of a run from its events: the
// replicas by number, and the state each one's events leave it in. It
// takes each event once (catchUp): reading every event again at each
// frame cost a run of lab 09, thousands of events, milliseconds a frame.
type handSeen struct {
	upTo   int // the events taken
	names  []string
	states map[string]handState
}

// catchUp takes the events r has that h has not.
func (h *handSeen) catchUp(events []history.Event) {
	if h.states == nil {
		h.states = map[string]handState{}
	}
	for _, e := range events[min(h.upTo, len(events)):] {
		if !replicaName.MatchString(e.Replica) {
			continue
		}
		if !slices.Contains(h.names, e.Replica) {
			h.names = append(h.names, e.Replica)
			slices.SortFunc(h.names, func(a, b string) int { return replicaNumber(a) - replicaNumber(b) })
		}
		h.states[e.Replica] = h.states[e.Replica].after(e)
	}
	h.upTo = len(events)
}

// replicas are the run's replicas so far, by number.
func (r *faultRun) replicas() []string {
	r.seen.catchUp(r.events)
	return r.seen.names
}

// picked is the replica faults by hand go to, and its state.
func (r *faultRun) picked() (string, handState, bool) {
	names := r.replicas()
	if len(names) == 0 || r.control == nil {
		return "", handState{}, false
	}
	name := names[r.pick%len(names)]
	return name, r.seen.states[name], true
}

// handKey sends the fault a key asks for to the running child, or the
// end of a by-hand run.
func (m *Model) handKey(msg tea.KeyPressMsg) {
	r := m.runs[m.showing]
	if r == nil {
		return
	}
	name, s, ok := r.picked()
	if !ok {
		return
	}
	k := m.keys.Hand
	var line string
	switch {
	case key.Matches(msg, k.Pick):
		r.pick = (r.pick + 1) % len(r.replicas())
		return
	case key.Matches(msg, k.End) && r.endsByHand():
		line = labrun.EndLine
	case key.Matches(msg, k.Pause) && !s.crashed:
		line = labrun.ControlLine(map[bool]labrun.Fault{false: labrun.Pause, true: labrun.Resume}[s.paused], name)
	case key.Matches(msg, k.Cut) && !s.crashed:
		line = labrun.ControlLine(map[bool]labrun.Fault{false: labrun.Cut, true: labrun.Heal}[s.cut], name)
	case key.Matches(msg, k.Crash) && !s.crashed:
		line = labrun.ControlLine(labrun.Crash, name)
	case key.Matches(msg, k.Restart) && s.crashed:
		line = labrun.ControlLine(labrun.Restart, name)
	default:
		return
	}
	// A child that has ended reads no more: its verdict is on its way.
	if !r.control.send(line) {
		r.unsent = line
		return
	}
	r.unsent = ""
	r.ended = r.ended || line == labrun.EndLine
}

// endsByHand says whether the run goes on until the learner ends it, and
// has not been ended yet.
func (r *faultRun) endsByHand() bool {
	return labrun.EndsByHand(r.schedule) && !r.ended
}

// handLines say which replica the keys act on and what they would do,
// for the state its events say it is in; in a by-hand run, how it ends;
// and a key the child did not take.
func (m Model) handLines(r *faultRun) []string {
	name, s, ok := r.picked()
	if !ok {
		return nil
	}
	var out []string
	switch {
	case s.crashed:
		out = append(out, fmt.Sprintf("your faults: %s crashed · r restart · tab next replica", name))
	case s.paused:
		out = append(out, fmt.Sprintf("your faults: %s paused · p resume · c crash · tab next replica", name))
	case s.cut:
		out = append(out, fmt.Sprintf("your faults: %s cut off · x heal · c crash · tab next replica", name))
	default:
		out = append(out, fmt.Sprintf("your faults on %s: p pause · x cut off · c crash · tab next replica", name))
	}
	switch {
	case r.endsByHand():
		out = append(out, fmt.Sprintf("the run goes on until you end it: e (%.0f minutes at most)", labrun.ByHandLimit.Minutes()))
	case labrun.EndsByHand(r.schedule):
		out = append(out, "ended: a watch, then every replica is told to stop, then the verdict")
	}
	if r.unsent != "" {
		out = append(out, fmt.Sprintf("not sent: %q (the run is not reading its input)", r.unsent))
	}
	return out
}

// handHelp is the one-line help of faults by hand during a run: the
// keys that act on the picked replica in the state its events say it is
// in, and e while the run waits to be ended.
func (m Model) handHelp() []key.Binding {
	r := m.runs[m.showing]
	if r == nil {
		return nil
	}
	_, s, ok := r.picked()
	if !ok {
		return nil
	}
	k := m.keys.Hand
	out := []key.Binding{k.Pick}
	switch {
	case s.crashed:
		out = append(out, k.Restart)
	default:
		pause, cut := k.Pause, k.Cut
		if s.paused {
			pause = withHelp(pause, "resume")
		}
		if s.cut {
			cut = withHelp(cut, "heal")
		}
		out = append(out, pause, cut, k.Crash)
	}
	if r.endsByHand() {
		out = append(out, k.End)
	}
	return out
}

// handFullHelp is every key of faults by hand during a run, for ?.
func (m Model) handFullHelp() []key.Binding {
	r := m.runs[m.showing]
	if r == nil {
		return nil
	}
	if _, _, ok := r.picked(); !ok {
		return nil
	}
	k := m.keys.Hand
	out := []key.Binding{k.Pick, withHelp(k.Pause, "pause or resume"), withHelp(k.Cut, "cut off or heal"), k.Crash, k.Restart}
	if r.endsByHand() {
		out = append(out, withHelp(k.End, "end the run (by-hand)"))
	}
	return out
}

// yourFaults names the reference's run on a by-hand run's faults, and
// yourFaultsToo on a named schedule's with the learner's keys in it.
const (
	yourFaults    = "your by-hand faults"
	yourFaultsToo = " and your faults"
)

// startReference runs the reference to compare with mine: on the same
// schedule, but on every fault of mine's history, at the same times and
// on the same replicas, when the learner pressed fault keys in it (a
// by-hand run of the reference would have none of them, and would wait
// to be ended; a schedule alone would leave the learner's out).
func (m *Model) startReference(mine *faultRun) tea.Cmd {
	if mine.history == nil || len(labrun.FaultSchedule(mine.history)) == 0 || !byHand(mine) {
		return m.startFaultRun(mine.schedule, true)
	}
	name := yourFaults
	if !labrun.EndsByHand(mine.schedule) {
		name = mine.schedule + yourFaultsToo
	}
	file, err := replayFile(*mine.history)
	if err != nil {
		m.runs[1] = &faultRun{schedule: name, reference: true, done: true, err: err}
		m.showing = 1
		return nil
	}
	return m.startRun(&faultRun{schedule: name, reference: true, replay: file})
}

// byHand says whether the learner broke replicas by hand in r: it is a
// by-hand run, or its history has a fault of the learner's keys.
func byHand(r *faultRun) bool {
	if labrun.EndsByHand(r.schedule) {
		return true
	}
	return slices.ContainsFunc(r.history.Events, func(e history.Event) bool {
		return e.Kind.IsFault() && e.Origin == history.ByLearner
	})
}

// replayFile writes h to a new file for a child's --faults (runChild
// removes it).
func replayFile(h history.History) (string, error) {
	f, err := os.CreateTemp("", "playground-labreplay-*.json")
	if err != nil {
		return "", fmt.Errorf("keep your faults for the reference's run: %w", err)
	}
	err = history.Write(f, h)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("keep your faults for the reference's run: %w", err)
	}
	return f.Name(), nil
}
