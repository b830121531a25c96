// Package experiment is the experiment engine: it runs a scenario (a
// *Scenario its caller gives it, from internal/experiment/scenario or
// internal/labrun) on a real etcd, with replicas that each hold their own
// client behind their own fault proxy, while the learner (or the script)
// pauses, crashes, partitions and restarts them. It keeps the run's
// history (internal/history): every replica's events, every fault, and
// what etcd held for the run's keys, from a watch; at the end the checker
// judges it by the scenario's properties.
//
// The package knows nothing about terminals, the course or the lab
// runs: the headless CLI prints the events, the TUI draws them, and
// titles and text reach it in the Scenario its caller passes.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/faultproxy"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/sanitize"
)

// Errors a run can end with before it starts.
var (
	ErrUnknown = errors.New("experiment: no such experiment")
	// ErrNeedsCluster: the scenario stops etcd members or changes the raft
	// leader, which only the in-process cluster allows.
	ErrNeedsCluster = errors.New("experiment: needs the in-process etcd cluster (it stops members, cuts their links or moves the raft leader), not an external one")
	// ErrNeedsInProcess: the scenario reconfigures etcd itself (auth), which
	// the playground will not do to an external cluster.
	ErrNeedsInProcess = errors.New("experiment: needs the in-process etcd (it turns on authentication), not an external one")
)

// Env says which etcd to run on.
type Env struct {
	// Etcd is the server to use; nil starts an in-process one for the run.
	// A *embedetcd.Remote (an external cluster) works for every scenario
	// but those that need the in-process cluster.
	Etcd embedetcd.Etcd
	// Cluster is used by the scenarios that stop members or move the raft
	// leader; nil starts a 3-member one for the run.
	Cluster *embedetcd.Cluster
	// HistoryDir, if set, is where the run saves its history when it
	// ends (the TUI passes HistoryDir()); Run.HistoryFile says where.
	HistoryDir string
	// Prediction is the option of the scenario's Predict question the
	// learner picked before the run, counted from 1 (0: none); the
	// history records it judged against what the run did.
	Prediction int
}

// Run is one execution of a scenario.
type Run struct {
	Scenario *Scenario
	Params   history.Params

	ctx       context.Context
	cancel    context.CancelFunc
	start     time.Time
	etcd      embedetcd.Etcd
	cluster   *embedetcd.Cluster
	keyPrefix string // what replica clients put in front of every key
	startRev  int64  // etcd's revision before the run wrote anything
	asLearner bool   // RunAsLearner runs: a shared cluster, logged in as the learner
	admin     *clientv3.Client
	rng       *rand.Rand
	cleanup   []func()

	mu sync.Mutex
	storeState
	header  history.History // the history's identity; events are kept apart
	events  []history.Event
	updated chan struct{}
	watch   *keyWatch
	timing  clusterTiming
	// timingNote says how the run adapted to the cluster's timing.
	timingNote string
	env        Env
	savedTo    string
	saveErr    error
	step       int  // the number of the last Phase
	over       bool // the verdict is in
	sink       func(history.Event)
	replicas   []*Replica
	resource   *Resource
	monitor    monitor
	autoplay   bool
	atStep     bool   // waiting in Phase for Step
	pending    string // the step Phase waits to begin, while atStep
	stepc      chan struct{}
	done       chan struct{}
	verdict    history.Verdict
	err        error
}

// Start begins a run of sc (its caller looked it up: the engine knows
// no scenario by name). sink, if not nil, receives every event as it
// happens (from many goroutines, one at a time).
func Start(ctx context.Context, sc *Scenario, p history.Params, env Env, sink func(history.Event)) (*Run, error) {
	name := sc.Name
	p = sc.Normalize(p)
	run := &Run{Scenario: sc, Params: p, sink: sink, autoplay: !p.Step, stepc: make(chan struct{}, 1),
		done: make(chan struct{}), updated: make(chan struct{}, 1),
		rng: rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))}
	run.ctx, run.cancel = context.WithCancel(ctx)
	run.env = env
	if err := run.connect(ctx, env); err != nil {
		run.close()
		return nil, fmt.Errorf("run %s: %w", name, err)
	}
	if err := run.prepare(ctx); err != nil {
		run.close()
		return nil, fmt.Errorf("run %s: %w", name, err)
	}
	run.resource = newResource(run, history.InitialFencing)
	run.start = time.Now()
	run.header = history.History{Format: history.HistoryFormat, Scenario: name, Params: run.Params, Timing: history.Timing(run.timing), Started: run.start, AsLearner: run.asLearner}
	go run.execute()
	return run, nil
}

// prepare reads the cluster's timing and the revision the key watch
// starts after.
func (run *Run) prepare(ctx context.Context) error {
	t, err := readTiming(ctx, run.admin, run.Params.TTL)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	run.applyTiming(t)
	g, err := run.admin.Get(ctx, "", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("read the start revision: %w", err)
	}
	run.startRev = g.Header.Revision
	return nil
}

// Execute runs sc to the end and returns its verdict.
func Execute(ctx context.Context, sc *Scenario, p history.Params, env Env, sink func(history.Event)) (history.Verdict, error) {
	run, err := Start(ctx, sc, p, env, sink)
	if err != nil {
		return history.Verdict{Scenario: sc.Name}, err
	}
	return run.Wait()
}

func (run *Run) connect(ctx context.Context, env Env) error {
	rem, remote := env.Etcd.(*embedetcd.Remote)
	if remote {
		if err := run.Scenario.SharedCluster(rem.Access()); err != nil {
			return err
		}
	}
	switch {
	case remote && run.Scenario.NeedsOwnServer:
		run.etcd, run.asLearner = env.Etcd, true
	case run.Scenario.NeedsCluster:
		cl := env.Cluster
		if c, ok := env.Etcd.(*embedetcd.Cluster); ok && cl == nil {
			cl = c
		}
		if cl == nil {
			c, err := embedetcd.StartCluster(ctx, 3)
			if err != nil {
				return fmt.Errorf("start the in-process cluster: %w", err)
			}
			cl = c
			run.cleanup = append(run.cleanup, func() { c.Close() })
		}
		run.cluster, run.etcd = cl, cl
	case run.Scenario.NeedsOwnServer || run.Scenario.OwnClusters || env.Etcd == nil:
		s, err := embedetcd.Start(ctx)
		if err != nil {
			return fmt.Errorf("start the in-process etcd: %w", err)
		}
		run.etcd = s
		run.cleanup = append(run.cleanup, func() { s.Close() })
	default:
		run.etcd = env.Etcd
	}
	runPrefix := fmt.Sprintf("experiments/%s/%x/", run.Scenario.Name, rand.Uint64())
	run.keyPrefix = runPrefix
	if r, ok := run.etcd.(*embedetcd.Remote); ok {
		run.keyPrefix = r.Prefix() + runPrefix
	}
	admin, err := run.etcd.Client()
	if err != nil {
		return fmt.Errorf("connect the run's observer: %w", err)
	}
	namespaced(admin, runPrefix)
	run.admin = admin
	run.cleanup = append(run.cleanup, func() {
		// Leave nothing behind on a shared cluster. Best effort: with
		// auth on (least-privilege) the admin may no longer write.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		admin.Delete(ctx, "", clientv3.WithPrefix())
		cancel()
		admin.Close()
	})
	return nil
}

func (run *Run) execute() {
	script := run.Scenario.Run
	if run.asLearner {
		script = run.Scenario.RunAsLearner
	}
	run.startKeyWatch(run.startRev)
	if run.timingNote != "" {
		run.Note("%s", run.timingNote)
	}
	ictx, stopInject := context.WithCancel(run.ctx)
	injected := make(chan struct{})
	go func() { defer close(injected); run.injectSchedule(ictx) }()
	v, err := script(run.ctx, run)
	err = run.inPhase(err)
	stopInject()
	<-injected
	v.Scenario = run.Scenario.Name
	for _, r := range run.Replicas() {
		r.stop()
	}
	run.finalStore()
	run.stopKeyWatch()
	if len(run.Scenario.Shows) > 0 && !run.asLearner {
		h := run.History()
		v = run.Scenario.Judge(&h, err)
	}
	v.Scenario = run.Scenario.Name
	if err != nil {
		v.Showed = false
		if v.Sentence() == "" {
			v.Summary = "the run failed: " + err.Error()
		}
	}
	run.Emit(history.Event{Kind: history.Finished, Value: boolValue(v.Showed), Text: v.Sentence()})
	run.mu.Lock()
	run.verdict, run.err, run.over = v, err, true
	run.mu.Unlock()
	run.keep()
	run.close()
	close(run.done)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// OnClose runs f when the run ends, after the final reading of the store.
// Only the script's goroutine calls it.
func (run *Run) OnClose(f func()) { run.cleanup = append(run.cleanup, f) }

func (run *Run) close() {
	run.cancel()
	for i := len(run.cleanup) - 1; i >= 0; i-- {
		run.cleanup[i]()
	}
	run.cleanup = nil
}

// Stop cancels the run; Wait then returns soon.
func (run *Run) Stop() { run.cancel() }

// Done is closed when the run has finished and released its etcd.
func (run *Run) Done() <-chan struct{} { return run.done }

// Wait blocks until the run is over and returns its verdict.
func (run *Run) Wait() (history.Verdict, error) {
	<-run.done
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.verdict, run.err
}

// Emit records an event, stamps its time and lets the invariant monitor
// look at it.
func (run *Run) Emit(e history.Event) {
	// A lab run's events and the values in etcd come from the learner's
	// code: whatever it wrote reaches the screen and the history file
	// without escape sequences.
	sanitize.Strings(&e)
	run.mu.Lock()
	defer run.mu.Unlock()
	e.At = time.Since(run.start)
	if e.Kind == history.Phase {
		run.step++
	}
	e.Step = run.step
	run.record(e)
	if run.Scenario != nil && run.Scenario.OwnRules {
		return
	}
	for _, v := range run.monitor.observe(e) {
		v.At = e.At
		run.record(v)
	}
}

func (run *Run) record(e history.Event) {
	run.events = append(run.events, e)
	if run.sink != nil {
		run.sink(e)
	}
	select {
	case run.updated <- struct{}{}:
	default:
	}
}

// Events returns the events from index since on.
func (run *Run) Events(since int) []history.Event {
	run.mu.Lock()
	defer run.mu.Unlock()
	if since >= len(run.events) {
		return nil
	}
	return append([]history.Event(nil), run.events[since:]...)
}

// ResetMonitor forgets owners and violations (between variants).
func (run *Run) ResetMonitor() {
	run.mu.Lock()
	run.monitor = monitor{}
	run.mu.Unlock()
}

// keep judges the learner's prediction and saves the history, when the
// run was asked to.
func (run *Run) keep() {
	if q := run.Scenario.Predict; q != nil && run.env.Prediction > 0 {
		h := run.History()
		q.Predicted(&h, run.env.Prediction-1)
		run.mu.Lock()
		run.header.Prediction = h.Prediction
		run.mu.Unlock()
	}
	if run.env.HistoryDir != "" {
		run.savedTo, run.saveErr = saveHistory(run.env.HistoryDir, run.History())
	}
}

// inPhase wraps a script's error with the step it happened in, so every
// error says where in the story the run was.
func (run *Run) inPhase(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	run.mu.Lock()
	step, text := run.step, ""
	for i := len(run.events) - 1; i >= 0; i-- {
		if run.events[i].Kind == history.Phase {
			text = run.events[i].Text
			break
		}
	}
	run.mu.Unlock()
	if step == 0 {
		return fmt.Errorf("before the first step: %w", err)
	}
	return fmt.Errorf("step %d (%s): %w", step, text, err)
}

// Phase begins the next step of the script; in step mode it first
// waits for Step, with the step pending (PendingStep) meanwhile. The
// step's event is recorded when it begins, not when it is announced: a
// step logged before it ran read, in step mode, as if its effects were
// late, and what happened while the learner read was counted in it.
func (run *Run) Phase(ctx context.Context, text string) error {
	run.mu.Lock()
	auto := run.autoplay
	if !auto {
		run.atStep, run.pending = true, text
	}
	run.mu.Unlock()
	if auto {
		run.Emit(history.Event{Kind: history.Phase, Text: text})
		return ctx.Err()
	}
	err := run.awaitStep(ctx)
	run.mu.Lock()
	run.atStep, run.pending = false, ""
	run.mu.Unlock()
	if err != nil {
		return err
	}
	run.Emit(history.Event{Kind: history.Phase, Text: text})
	return nil
}

// awaitStep waits for Step, or the step delay of a reader's pace.
func (run *Run) awaitStep(ctx context.Context) error {
	var delay <-chan time.Time
	if d := run.Params.StepDelay; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		delay = t.C
	}
	select {
	case <-run.stepc:
		return nil
	case <-delay:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PendingStep is the step the script waits, in step mode, for Step to
// begin; "" when it waits for none.
func (run *Run) PendingStep() string {
	run.mu.Lock()
	defer run.mu.Unlock()
	if !run.atStep {
		return ""
	}
	return run.pending
}

// Announce is Phase for a step the script must not wait at, even in step
// mode: one whose timing is what it measures (a lease's clock is
// running).
func (run *Run) Announce(text string) {
	run.Emit(history.Event{Kind: history.Phase, Text: text})
}

// AtStep reports whether the script, in step mode, waits for Step to
// begin its next phase (PendingStep).
func (run *Run) AtStep() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.atStep
}

// Step lets a run in step mode go on to its next phase.
func (run *Run) Step() {
	run.mu.Lock()
	run.atStep = false // taken: AtStep says so until the next phase
	run.mu.Unlock()
	select {
	case run.stepc <- struct{}{}:
	default:
	}
}

// SetAutoPlay switches between stepping and running straight through.
func (run *Run) SetAutoPlay(on bool) {
	run.mu.Lock()
	run.autoplay = on
	run.mu.Unlock()
	if on {
		run.Step()
	}
}

// AutoPlay reports whether the run goes on without Step.
func (run *Run) AutoPlay() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.autoplay
}

// NewReplica adds a replica with its own fault proxies and client.
func (run *Run) NewReplica(name string) (*Replica, error) {
	r := &Replica{Name: name, run: run, role: RoleFollower, gate: make(chan struct{}), clockRate: 1}
	close(r.gate)
	for _, ep := range run.etcd.Endpoints() {
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("replica %s: bad endpoint %q", name, ep)
		}
		p, err := faultproxy.New(u.Host)
		if err != nil {
			return nil, err
		}
		r.proxies = append(r.proxies, p)
	}
	cli, err := r.dial()
	if err != nil {
		for _, p := range r.proxies {
			p.Close()
		}
		return nil, err
	}
	r.cli = cli
	run.mu.Lock()
	run.replicas = append(run.replicas, r)
	run.mu.Unlock()
	return r, nil
}

// NewReplicas adds n replicas named r1..rn.
func (run *Run) NewReplicas(n int) ([]*Replica, error) {
	out := make([]*Replica, n)
	for i := range n {
		r, err := run.NewReplica(fmt.Sprintf("r%d", i+1))
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// Replicas returns the run's replicas in creation order.
func (run *Run) Replicas() []*Replica {
	run.mu.Lock()
	defer run.mu.Unlock()
	return append([]*Replica(nil), run.replicas...)
}

// Replica returns the replica with the given name, or nil.
func (run *Run) Replica(name string) *Replica {
	for _, r := range run.Replicas() {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Resource is the protected resource the replicas write to.
func (run *Run) Resource() *Resource {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.resource
}

// NewResource replaces the protected resource (between variants).
func (run *Run) NewResource(fencing bool) *Resource {
	res := newResource(run, fencing)
	run.mu.Lock()
	run.resource = res
	run.mu.Unlock()
	run.Emit(history.Event{Kind: history.Note, Facts: &history.Facts{Op: history.OpNewResource, Succeeded: fencing}, Text: "the resource starts empty, fencing " + onOff(fencing)})
	return res
}

// Admin is an observer's client (not behind any fault proxy).
func (run *Run) Admin() *clientv3.Client { return run.admin }

// Access is how the run's etcd is reached: with the learner's TLS files
// and user on a shared cluster, by plain endpoints otherwise.
func (run *Run) Access() access.Settings {
	if r, ok := run.etcd.(*embedetcd.Remote); ok {
		return r.Access()
	}
	return access.Settings{Endpoints: run.etcd.Endpoints()}
}

// Cluster is the in-process cluster of a NeedsCluster scenario.
func (run *Run) Cluster() *embedetcd.Cluster { return run.cluster }

// Elapsed is the time since the run started.
func (run *Run) Elapsed() time.Duration { return time.Since(run.start) }

// TTL is the run's lease TTL in seconds.
func (run *Run) TTL() int64 { return run.Params.TTL }

// TTLDuration is the run's lease TTL as a duration.
func (run *Run) TTLDuration() time.Duration { return time.Duration(run.Params.TTL) * time.Second }

// measure emits a measured figure.
func (run *Run) measure(value float64, unit, text string) {
	run.Emit(history.Event{Kind: history.Measured, Value: value, Unit: unit, Text: text})
}

// Note emits a line of commentary.
func (run *Run) Note(format string, args ...any) {
	run.Emit(history.Event{Kind: history.Note, Text: fmt.Sprintf(format, args...)})
}

// Intn returns a seeded random number in [0, n).
func (run *Run) Intn(n int) int {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.rng.IntN(n)
}

// WaitFor polls cond every 20 ms until it is true, ctx is done or d passes.
func WaitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// Sleep waits d of real time, or until ctx is done (its error then).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// names lists replica names, sorted, joined by ", ".
func names(set map[string]int64) string {
	out := make([]string, 0, len(set))
	for n, tok := range set {
		out = append(out, fmt.Sprintf("%s (token %d)", n, tok))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Part begins a named part of the run (a variant: "fencing off"); the
// scenario's properties name the part they judge.
func (run *Run) Part(name string) {
	run.Emit(history.Event{Kind: history.PartBegins, Text: name})
}

// Figure records a measured number under a name the verdict's Figures
// keep and the properties read.
func (run *Run) Figure(name string, value float64, unit, text string) {
	run.Emit(history.Event{Kind: history.Measured, Figure: name, Value: value, Unit: unit, Text: text})
}

// History returns a copy of the run's history so far; Verdict is set
// once the run is over.
func (run *Run) History() history.History {
	run.mu.Lock()
	defer run.mu.Unlock()
	h := run.header
	h.Events = slices.Clone(run.events)
	if run.over {
		v := run.verdict
		h.Verdict = &v
		h.Error = errText(run.err, "")
	}
	return h
}

// Replay is the verdict on a recorded history of sc, computed again by
// the checker (the recorded verdict when sc is nil or judges nothing,
// or for a run as the learner on a class cluster).
func Replay(h *history.History, sc *Scenario) history.Verdict {
	if sc == nil || len(sc.Shows) == 0 || h.AsLearner {
		if h.Verdict != nil {
			return *h.Verdict
		}
		return history.Verdict{Scenario: h.Scenario, Summary: "the recorded run has no verdict"}
	}
	var runErr error
	if h.Error != "" {
		runErr = errors.New(h.Error)
	}
	return sc.Judge(h, runErr)
}

// Updated receives a value (at most one waits) whenever events were
// recorded since the last receive: a screen waits on it instead of
// polling, and then reads Events from where it left off.
func (run *Run) Updated() <-chan struct{} { return run.updated }

// Namespace is what the run's replicas put in front of every key: the
// run's own prefix (under the learner's on a shared cluster).
func (run *Run) Namespace() string { return run.keyPrefix }

// InNamespace puts every key, watch and lease of cli, a client the
// script dialled itself, under the run's namespace.
func (run *Run) InNamespace(cli *clientv3.Client) { namespaced(cli, run.keyPrefix) }

// Etcd is the etcd the run uses.
func (run *Run) Etcd() embedetcd.Etcd { return run.etcd }

// TryTimeout is how long the first try of a request may go unanswered
// before it is given up and sent again (or, for a write, checked), by
// the cluster's timing: see clusterTiming.tryTimeout.
func (run *Run) TryTimeout() time.Duration { return run.timing.tryTimeout() }

// ElectionWait is how long a request may keep meeting a leader change
// before the run gives up on the cluster: see clusterTiming.electionWait.
func (run *Run) ElectionWait() time.Duration { return run.timing.electionWait() }
