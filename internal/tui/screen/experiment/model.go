// Package experiment is the experiment screen: replica cards with their
// roles, tokens and draining lease bars, the protected resource, a
// scrolling timeline of events, keys to inject faults into a chosen
// replica, and a predict-the-outcome question before the run with the
// real result after it. It drives internal/experiment and knows nothing of
// the root model.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/internal/tui/timeline"
	"github.com/ownership-election/playground/quiz"
)

type phase int

const (
	phasePredict  phase = iota // answering the predict question
	phaseReady                 // set up, not started
	phaseStarting              // etcd and replicas coming up
	phaseRunning
	phaseDone
)

// Options configure the screen.
type Options struct {
	// Name is the scenario to show (see internal/experiment).
	Name string
	// Etcd is where ordinary scenarios run; nil starts an in-process
	// server for the run. Scenarios that need the in-process cluster
	// start their own.
	Etcd embedetcd.Etcd
	// Tempo is the auto-play tempo the learner last chose (TempoSet),
	// which a new screen starts with.
	Tempo    time.Duration
	TempoSet bool
	// Step starts the run in step mode (wait for space before each
	// phase): the root sets it for an experiment the learner never ran,
	// and after that keeps the learner's last choice.
	Step bool
	// Shared names the external cluster the learner connected to ("" for
	// the playground's own etcd). While it connects (Etcd nil) the screen
	// waits for it; when it failed (SharedErr) the screen asks before a
	// run moves to an in-process etcd.
	Shared    string
	SharedErr error
}

// snapshot is everything the view draws from a run.
type snapshot struct {
	replicas []experiment.ReplicaState // the cards: those still acting
	all      []experiment.ReplicaState // every replica, in creation order
	resource history.ResourceState
	events   []history.Event
	verdict  *history.Verdict
	atStep   bool                  // the script waits for space before its next phase
	pending  string                // that phase, which has not begun
	store    experiment.StoreState // what etcd holds under the run's prefix
}

// Model is the experiment screen.
type Model struct {
	screen.Base
	sc   *experiment.Scenario
	opts Options
	keys KeyMap

	phase  phase
	params history.Params
	order  []int // display order of the predict options
	picked int   // option index the learner predicted, -1 if none
	// judge: the next run to end is the one the prediction was made
	// for, whose judgement goes to the learner's review.
	judge bool
	// predicted is the learner's pick as the last finished run judged
	// it, and outcome which options that run bore out.
	predicted *history.Prediction
	outcome   []bool
	run       *experiment.Run
	cancel    context.CancelFunc
	snap      snapshot
	sel       int            // selected replica
	tempo     time.Duration  // auto-play's wait at each step
	step      stepClock      // the step the script waits at
	saved     string         // where the last run's history went
	saveErr   error          // ... or why it did not
	tl        timeline.Model // the timeline's cursor (see m.timeline)
	err       error
	notice    string
	started   time.Time
	now       func() time.Time
	// changed is when the run last emitted an event: a run that goes
	// quiet while the learner holds a replica down is waiting for it.
	changed time.Time

	on      string // which etcd a run uses, in words
	waiting bool   // for the shared cluster to answer
	ask     error  // the shared cluster failed: asking before falling back
}

// Messages the screen sends itself.
type (
	startedMsg struct {
		run    *experiment.Run
		cancel context.CancelFunc
		err    error
	}
	tickMsg struct{ run *experiment.Run }
)

// New builds the screen for the experiment opts.Name. An unknown name
// gives a screen that says so.
func New(ctx screen.Context, opts Options) *Model {
	sc := scenario.Lookup(opts.Name)
	if sc == nil {
		return &Model{Base: screen.NewBase(ctx), keys: DefaultKeyMap(), picked: -1, now: time.Now,
			err: fmt.Errorf("no experiment %q (see: playground experiment list)", opts.Name)}
	}
	m := Model{Base: screen.NewBase(ctx), sc: sc, opts: opts, keys: DefaultKeyMap(), picked: -1, now: time.Now,
		params: history.Params{Seed: 1, Step: opts.Step, TTL: sc.DefaultTTL}, tempo: defaultTempo, tl: timeline.New(ctx.Styles)}
	m.phase = phaseReady
	if q := sc.Predict; q != nil && len(q.Options) > 1 {
		m.phase = phasePredict
		m.order = quiz.Shuffle(predictQuiz(sc), ctx.Learner)
	}
	if opts.TempoSet && knownTempo(opts.Tempo) {
		m.tempo = opts.Tempo
	}
	switch {
	case opts.Etcd != nil:
		m.on = runsOn(sc, opts.Etcd)
	case opts.Shared != "" && opts.SharedErr != nil:
		m.ask = opts.SharedErr
	case opts.Shared != "":
		m.waiting = true // for screen.EtcdReady
	default:
		m.on = runsOn(sc, nil)
	}
	return &m
}

var _ screen.Screen = (*Model)(nil)

// ShortHelp lists the keys that matter most.
func (m *Model) ShortHelp() []key.Binding {
	switch {
	case m.ask != nil:
		return []key.Binding{fallback}
	case m.waiting || m.sc == nil:
		return nil
	}
	return m.keys.shortHelpIn(m.phase, m.auto(), !m.sc.NoReplicas)
}

// FullHelp lists every key.
func (m *Model) FullHelp() [][]key.Binding {
	if m.ask != nil || m.waiting || m.sc == nil {
		return [][]key.Binding{m.ShortHelp()}
	}
	if m.sc.NoReplicas {
		return m.keys.fullHelpWithout()
	}
	return m.keys.FullHelp()
}

// Status says, in the footer, whether the run steps or plays through and
// which key changes that: a learner in step mode who does not know space
// would otherwise think the run hangs.
func (m *Model) Status() string {
	if m.sc == nil || m.ask != nil || m.waiting {
		return ""
	}
	if m.phase == phaseRunning {
		if m.auto() {
			return "auto-play, " + tempoLabel(m.tempo) + " · t tempo · a step mode"
		}
		return "step mode · space next · a auto-play"
	}
	if m.phase == phaseDone && m.saveErr != nil {
		return "history not saved: " + m.saveErr.Error()
	}
	if m.phase == phaseDone && m.saved != "" {
		return "history saved" // where: under the result, when it has room
	}
	if m.params.Step {
		return "next run: step mode · a auto-play"
	}
	return "next run: auto-play, " + tempoLabel(m.tempo) + " · t tempo · a step mode"
}

// Update handles a message; see update.
func (m *Model) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	next, cmd := m.update(msg)
	*m = next
	return m, cmd
}

// Close stops a running experiment.
func (m *Model) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	if m.run != nil {
		m.run.Stop()
	}
}

// tick asks for a refresh as soon as the run records an event, or ends,
// and after refreshEvery when nothing happens (the clocks on the screen,
// a lease's time left, move on without events). Waiting on Updated, not
// polling, puts an event on the screen within milliseconds of it (make
// bench measures it, to the drawn view); the screen is the run's one
// reader of Updated. A burst of events is taken in refreshes at least
// refreshGap apart, each drawing all that came: the timeline is rebuilt
// on every refresh that brings events.
func tick(run *experiment.Run) tea.Cmd {
	return func() tea.Msg {
		time.Sleep(refreshGap)
		t := time.NewTimer(refreshEvery - refreshGap)
		defer t.Stop()
		select {
		case <-run.Updated():
		case <-run.Done():
		case <-t.C:
		}
		return tickMsg{run: run}
	}
}

// refreshEvery is how often a quiet run's screen is drawn again, and
// refreshGap the least time between two refreshes.
const (
	refreshEvery = 100 * time.Millisecond
	refreshGap   = 20 * time.Millisecond
)

func (m Model) start() (Model, tea.Cmd) {
	m.phase, m.err, m.notice, m.snap, m.step = phaseStarting, nil, "", snapshot{}, stepClock{}
	m.saved, m.saveErr = "", nil
	m.predicted, m.outcome = nil, nil
	m.tl.Follow()
	name, p, env := m.runArgs()
	return m, func() tea.Msg {
		env.HistoryDir = experiment.HistoryDir() // every run's history is kept (replay FILE)
		ctx, cancel := context.WithCancel(context.Background())
		run, err := scenario.Start(ctx, name, p, env, nil)
		if err != nil {
			cancel()
		}
		return startedMsg{run: run, cancel: cancel, err: err}
	}
}

// runArgs are what the next run starts with: the scenario, its
// parameters and the etcd to use, with the learner's prediction, which
// the run's history records judged.
func (m Model) runArgs() (string, history.Params, experiment.Env) {
	p := m.params
	p.Step = true // the screen takes the steps, at its tempo in auto-play (autoStep)
	return m.sc.Name, p, experiment.Env{Etcd: m.opts.Etcd, Prediction: m.picked + 1}
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	if m.sc == nil {
		return m, nil // unknown experiment: nothing to run
	}
	switch msg := msg.(type) {
	case screen.EtcdReady:
		return m.etcdReady(msg), nil
	case startedMsg:
		if msg.err != nil {
			m.phase, m.err = phaseReady, msg.err
			if errors.Is(msg.err, experiment.ErrNeedsCluster) || errors.Is(msg.err, experiment.ErrNeedsInProcess) {
				m.err = fmt.Errorf("%s needs the playground's own etcd; start the playground without --etcd-endpoints to run it", m.sc.Name)
			}
			return m, nil
		}
		m.run, m.cancel, m.phase, m.started = msg.run, msg.cancel, phaseRunning, m.now()
		m.changed = m.started
		return m, tick(msg.run)
	case tickMsg:
		if msg.run != m.run || m.run == nil {
			return m, nil
		}
		m.refresh()
		if m.phase == phaseDone {
			if m.snap.verdict == nil || m.err != nil {
				return m, nil // stopped or broken: not a run to count
			}
			judged := m.judged() // once: the flag it clears goes back with m
			return m, tea.Batch(screen.Send(screen.ExperimentRan{Name: m.sc.Name, Shown: m.snap.verdict.Showed}), judged, m.saveHistory())
		}
		return m, tick(m.run)
	case savedMsg:
		if msg.run == m.run {
			m.saved, m.saveErr = msg.path, msg.err
		}
		return m, nil
	case tea.KeyPressMsg:
		if m.ask != nil || m.waiting {
			return m.fallbackKey(msg), nil
		}
		return m.key(msg)
	}
	return m, nil
}

// refresh copies the run's state into the snapshot.
func (m *Model) refresh() {
	run := m.run
	if evs := run.Events(len(m.snap.events)); len(evs) > 0 {
		m.snap.events = append(m.snap.events, evs...)
		m.changed = m.now()
	}
	var all []experiment.ReplicaState
	for _, r := range run.Replicas() {
		all = append(all, r.State())
	}
	m.snap.all = all
	m.snap.replicas, m.sel = cardsOf(all, len(m.snap.replicas), m.sel)
	m.snap.resource = run.Resource().State()
	m.snap.atStep = run.AtStep()
	m.snap.pending = run.PendingStep()
	m.snap.store = run.Store()
	select {
	case <-run.Done():
		v, err := run.Wait()
		m.snap.verdict = &v
		m.err = err
		m.phase = phaseDone
		h := run.History()
		m.judgePrediction(&h)
		// The cursor goes to what the verdict is about.
		t := m.timeline()
		t.Focus(scenario.Focus(&h))
		m.tl = t
		if m.cancel != nil {
			m.cancel()
		}
	default:
	}
	if m.sel >= len(m.snap.replicas) {
		m.sel = max(0, len(m.snap.replicas)-1)
	}
	if m.phase == phaseRunning {
		m.autoStep()
	}
}

func (m Model) key(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.keys
	m.notice = ""
	switch m.phase {
	case phasePredict:
		if key.Matches(msg, k.Choose) {
			n := int(msg.String()[0] - '1')
			if n >= 0 && n < len(m.order) {
				m.picked, m.judge = m.order[n], true
				m.phase = phaseReady
				return m.start()
			}
		}
		if key.Matches(msg, k.Start) {
			m.notice = "pick the outcome you expect first (1-" + fmt.Sprint(len(m.order)) + ")"
		}
		if key.Matches(msg, k.AutoPlay) {
			m.params.Step = !m.params.Step
			return m, screen.Send(screen.StepModeChosen{Step: m.params.Step})
		}
		if key.Matches(msg, k.Tempo) {
			return m.nextTempo()
		}
		return m, nil
	case phaseReady, phaseDone:
		if m, ok := m.scrubKey(msg); ok {
			return m, nil
		}
		switch {
		case key.Matches(msg, k.Start):
			return m.start()
		case m.sc.NoReplicas && (key.Matches(msg, k.TTLUp) || key.Matches(msg, k.TTLDown)):
			// No lease: a TTL the header does not show would change nothing.
		case key.Matches(msg, k.TTLUp):
			_, hi := m.sc.TTLRange()
			m.params.TTL = min(m.params.TTL+1, 10, hi)
		case key.Matches(msg, k.TTLDown):
			lo, _ := m.sc.TTLRange() // leader-change needs 3s or more
			m.params.TTL = max(m.params.TTL-1, lo)
		case key.Matches(msg, k.Fencing):
			m.params.Fencing = cycle(m.params.Fencing)
		case key.Matches(msg, k.Unlock):
			m.params.VersionedUnlock = cycle(m.params.VersionedUnlock)
		case key.Matches(msg, k.AutoPlay):
			m.params.Step = !m.params.Step
			return m, screen.Send(screen.StepModeChosen{Step: m.params.Step})
		case key.Matches(msg, k.Tempo):
			return m.nextTempo()
		case key.Matches(msg, k.Step), key.Matches(msg, k.Pause), key.Matches(msg, k.Crash),
			key.Matches(msg, k.Restart), key.Matches(msg, k.Partition), key.Matches(msg, k.SlowClock):
			// Faults and steps act on a run; say so rather than do nothing.
			m.notice = "nothing is running: enter starts a run, then " + msg.String() + " acts on the selected replica"
			if key.Matches(msg, k.Step) {
				m.notice = "nothing is running: enter starts a run; a switches step mode on or off for it"
			}
		}
		return m, nil
	case phaseRunning:
		return m.runningKey(msg)
	}
	return m, nil
}

// cycle goes both -> off -> on -> both.
func cycle(b *bool) *bool {
	switch {
	case b == nil:
		f := false
		return &f
	case !*b:
		t := true
		return &t
	default:
		return nil
	}
}

func (m Model) runningKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k, run := m.keys, m.run
	if m, ok := m.scrubKey(msg); ok {
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Prev) && len(m.snap.replicas) > 0:
		m.sel = (m.sel + len(m.snap.replicas) - 1) % len(m.snap.replicas)
		return m, nil
	case key.Matches(msg, k.Next) && len(m.snap.replicas) > 0:
		m.sel = (m.sel + 1) % len(m.snap.replicas)
		return m, nil
	case run == nil:
		return m, nil
	}
	var target *experiment.Replica
	if m.sel < len(m.snap.replicas) {
		target = run.Replica(m.snap.replicas[m.sel].Name)
	}
	switch {
	case key.Matches(msg, k.Step):
		run.Step()
	case key.Matches(msg, k.AutoPlay):
		// The header follows at once, and so does the next run; a step
		// the script already waits at waits a whole tempo from now.
		m.params.Step = !m.params.Step
		m.step.since = m.now()
		return m, screen.Send(screen.StepModeChosen{Step: m.params.Step})
	case key.Matches(msg, k.Tempo):
		return m.nextTempo()
	case key.Matches(msg, k.Fencing):
		res := run.Resource()
		on := !res.State().Fencing
		go res.SetFencing(on)
	case target == nil:
	case key.Matches(msg, k.Pause):
		if m.snap.replicas[m.sel].Paused {
			go target.Resume(history.ByLearner)
		} else {
			go target.Pause(history.ByLearner)
		}
	case key.Matches(msg, k.Crash):
		go target.Crash(history.ByLearner)
	case key.Matches(msg, k.Restart):
		go func() {
			if err := target.Restart(history.ByLearner); err != nil {
				run.Note("%v", err)
			}
		}()
	case key.Matches(msg, k.SlowClock):
		// Half speed: the replica's local lease check believes it has
		// time left after etcd has already expired the lease.
		rate := 0.5
		if r := m.snap.replicas[m.sel].ClockRate; r != 0 && r != 1 {
			rate = 1
		}
		go target.SetClockRate(rate, history.ByLearner)
	case key.Matches(msg, k.Partition):
		if m.snap.replicas[m.sel].Partitioned {
			go target.Heal(history.ByLearner)
		} else {
			go target.Partition(history.ByLearner)
		}
	}
	return m, nil
}

// cardsOf picks the replicas to draw cards for, and the selection: the
// ones a script retired (the first variant's, in fencing) leave the cards
// to those that act; when all are retired (the run is over) every card
// comes back and the selection moves to the last, so the cards end on the
// replicas that acted last. shown is how many cards were drawn before.
func cardsOf(all []experiment.ReplicaState, shown, sel int) ([]experiment.ReplicaState, int) {
	var acting []experiment.ReplicaState
	for _, r := range all {
		if r.Role != experiment.RoleRetired {
			acting = append(acting, r)
		}
	}
	switch {
	case len(acting) > 0:
		return acting, sel
	case shown > 0 && shown < len(all):
		return all, len(all) - 1
	}
	return all, sel
}
