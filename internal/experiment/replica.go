package experiment

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/ownership-election/playground/internal/faultproxy"
	"github.com/ownership-election/playground/internal/history"
)

// Body is what a replica does while it runs: campaign, write, renew. It is
// started by Start and again by Restart after a crash, and must return
// when ctx is done.
type Body func(ctx context.Context, r *Replica) error

// Replica is one contender: a goroutine with its own etcd client connected
// through its own fault proxies.
type Replica struct {
	Name    string
	run     *Run
	proxies []*faultproxy.Proxy

	mu          sync.Mutex
	cli         *clientv3.Client
	ctx         context.Context
	cancel      context.CancelFunc
	body        Body
	done        chan struct{}
	gate        chan struct{} // closed while not paused
	paused      bool
	partitioned bool
	crashed     bool
	clockRate   float64
	clockBase   time.Time // local time at clockReal
	clockReal   time.Time
	role        Role
	token       int64
	lease       *Lease
	keepers     sync.WaitGroup // renewal loops, which use the client too
}

// Role is what a replica currently believes it is (history.Role, which
// the screens read without this package).
type Role = history.Role

// The roles the scenarios give their replicas.
const (
	RoleFollower    = history.RoleFollower
	RoleCandidate   = history.RoleCandidate
	RoleOwner       = history.RoleOwner
	RoleSteppedDown = history.RoleSteppedDown
	RoleWorker      = history.RoleWorker
	RoleCrashed     = history.RoleCrashed
	RoleRetired     = history.RoleRetired
)

// ReplicaState is a snapshot of a replica for display (history.ReplicaState).
type ReplicaState = history.ReplicaState

func (r *Replica) dial() (*clientv3.Client, error) {
	addrs := r.Endpoints()
	// Through the replica's own fault proxies, with the learner's TLS
	// files and user when the cluster is a shared one.
	cfg, err := r.run.Access().ClientConfigVia(addrs, zap.NewNop())
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", r.Name, err)
	}
	cfg.DialTimeout = 3 * time.Second
	cfg.DialOptions = []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 300 * time.Millisecond},
		MinConnectTimeout: time.Second,
	})}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("replica %s: connect: %w", r.Name, err)
	}
	namespaced(cli, r.run.keyPrefix)
	return cli, nil
}

// namespaced puts every key, watch and lease of cli under prefix.
func namespaced(cli *clientv3.Client, prefix string) {
	cli.KV = namespace.NewKV(cli.KV, prefix)
	cli.Watcher = namespace.NewWatcher(cli.Watcher, prefix)
	cli.Lease = namespace.NewLease(cli.Lease, prefix)
}

// Client is the replica's current client (nil while crashed).
func (r *Replica) Client() *clientv3.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cli
}

// Start runs body in the replica's goroutine.
func (r *Replica) Start(body Body) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.body != nil && !r.crashed {
		return fmt.Errorf("replica %s: already running", r.Name)
	}
	r.body = body
	return r.startLocked()
}

func (r *Replica) startLocked() error {
	if r.cli == nil {
		cli, err := r.dial()
		if err != nil {
			return err
		}
		r.cli = cli
	}
	r.crashed = false
	r.ctx, r.cancel = context.WithCancel(r.run.ctx)
	done := make(chan struct{})
	r.done = done
	ctx, body := r.ctx, r.body
	go func() {
		defer close(done)
		if err := body(ctx, r); err != nil && ctx.Err() == nil {
			r.Emit(history.Event{Kind: history.Note, Text: "stopped: " + err.Error()})
		}
	}()
	return nil
}

// Done is closed when the replica's current body has returned.
func (r *Replica) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return r.done
}

// Emit records an event about this replica.
func (r *Replica) Emit(e history.Event) {
	e.Replica = r.Name
	r.run.Emit(e)
}

// SetRole records what the replica currently believes it is, for display.
func (r *Replica) SetRole(role Role, token int64) {
	r.mu.Lock()
	r.role, r.token = role, token
	r.mu.Unlock()
}

// Checkpoint blocks while the replica is paused. Bodies call it between
// steps: that is where a paused process stands still, and from where it
// carries on, unaware of the time it lost.
func (r *Replica) Checkpoint(ctx context.Context) error {
	r.mu.Lock()
	gate := r.gate
	r.mu.Unlock()
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sleep waits d of the replica's local time (see SetClockRate), then
// passes a Checkpoint.
func (r *Replica) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(r.RealDuration(d))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return r.Checkpoint(ctx)
}

// RealDuration is how long local lasts in real time on the replica's
// clock (SetClockRate): a replica whose clock runs slow waits longer.
func (r *Replica) RealDuration(local time.Duration) time.Duration {
	r.mu.Lock()
	rate := r.clockRate
	r.mu.Unlock()
	if rate <= 0 {
		rate = 1
	}
	return time.Duration(float64(local) / rate)
}

// Now is the replica's local time: real time unless SetClockRate made its
// clock run slow or fast.
func (r *Replica) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nowLocked(time.Now())
}

func (r *Replica) nowLocked(real time.Time) time.Time {
	if r.clockReal.IsZero() {
		return real
	}
	return r.clockBase.Add(time.Duration(float64(real.Sub(r.clockReal)) * r.clockRate))
}

// Pause freezes the replica's work and its network, like a long GC pause.
// Every fault says who injected it, for the history: the learner's keys
// (history.ByLearner) or the script (history.ByScript).
func (r *Replica) Pause(by history.Origin) {
	r.mu.Lock()
	if r.paused {
		r.mu.Unlock()
		return
	}
	r.paused = true
	r.gate = make(chan struct{})
	r.mu.Unlock()
	for _, p := range r.proxies {
		p.Freeze()
	}
	r.Emit(history.Event{Kind: history.Paused, Origin: by, Text: "paused: work and network frozen"})
}

// Resume ends a pause; the replica carries on where it stopped.
func (r *Replica) Resume(by history.Origin) {
	r.mu.Lock()
	if !r.paused {
		r.mu.Unlock()
		return
	}
	r.paused = false
	gate := r.gate
	r.mu.Unlock()
	// Recorded before the replica runs again, so that what it does on
	// waking (a step-down) comes after its waking in the history.
	r.Emit(history.Event{Kind: history.Resumed, Origin: by, Text: "resumed, unaware of the time it lost"})
	close(gate)
	for _, p := range r.proxies {
		p.Thaw()
	}
}

// Partition cuts the replica off the network; its work goes on.
func (r *Replica) Partition(by history.Origin) {
	r.mu.Lock()
	r.partitioned = true
	r.mu.Unlock()
	for _, p := range r.proxies {
		p.Partition()
	}
	r.Emit(history.Event{Kind: history.Partitioned, Origin: by, Text: "partitioned: network dropped, work continues"})
}

// Heal ends a partition.
func (r *Replica) Heal(by history.Origin) {
	r.mu.Lock()
	r.partitioned = false
	r.mu.Unlock()
	for _, p := range r.proxies {
		p.Heal()
	}
	r.Emit(history.Event{Kind: history.Healed, Origin: by, Text: "network back"})
}

// Stall freezes only the replica's network for d (jitter): its work goes
// on. Only scripts stall.
func (r *Replica) Stall(ctx context.Context, d time.Duration) {
	r.Emit(history.Event{Kind: history.Stalled, Origin: history.ByScript, Value: d.Seconds(), Unit: "s", Text: fmt.Sprintf("network stalls for %s (work goes on)", d)})
	for _, p := range r.proxies {
		p.Freeze()
	}
	defer func() {
		for _, p := range r.proxies {
			p.Thaw()
		}
	}()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// SetClockRate makes the replica's local clock run at rate times real time
// (0.5: slow, it thinks less time passed; 2: fast).
func (r *Replica) SetClockRate(rate float64, by history.Origin) {
	r.mu.Lock()
	now := time.Now()
	r.clockBase = r.nowLocked(now)
	r.clockReal = now
	r.clockRate = rate
	r.mu.Unlock()
	r.Emit(history.Event{Kind: history.ClockChanged, Origin: by, Value: rate, Text: fmt.Sprintf("local clock now runs at %.2gx real time", rate)})
}

// Crash kills the replica the way etcd sees a crash: its work stops, its
// client is closed and its lease is orphaned, never revoked.
func (r *Replica) Crash(by history.Origin) {
	r.mu.Lock()
	if r.crashed {
		r.mu.Unlock()
		return
	}
	if r.cancel == nil {
		// A replica the script plays step by step (ttl-unlock-bug's)
		// has no process to stop: say so rather than do nothing.
		r.mu.Unlock()
		r.Emit(history.Event{Kind: history.Note, Origin: by, Text: "not crashed: the script plays " + r.Name + "'s steps itself, so it has no process of its own to stop"})
		return
	}
	r.crashed = true
	r.cancel()
	cli := r.cli
	r.role, r.token, r.lease = RoleCrashed, 0, nil
	if r.paused {
		r.paused = false
		close(r.gate)
	}
	done := r.done
	r.mu.Unlock()
	for _, p := range r.proxies {
		p.Thaw()
	}
	// The body's calls end with its context; only then may the client
	// close (closing it under a running Watch is a data race).
	<-done
	r.keepers.Wait()
	r.dropClient(cli)
	r.Emit(history.Event{Kind: history.Crashed, Origin: by, Text: "crashed: client closed, nothing revoked (any lease is orphaned)"})
}

// dropClient closes cli once the body that used it has returned. Until
// then Client kept returning it (its calls fail with the cancelled
// context), so a body never sees a nil client mid-step.
func (r *Replica) dropClient(cli *clientv3.Client) {
	r.mu.Lock()
	if r.cli == cli {
		r.cli = nil
	}
	r.mu.Unlock()
	if cli != nil {
		cli.Close()
	}
}

// Retire stops a replica quietly at the end of a part of a script; an
// owner is recorded as stepping down.
func (r *Replica) Retire() {
	r.mu.Lock()
	owner := r.role == RoleOwner
	r.mu.Unlock()
	if owner {
		r.Emit(history.Event{Kind: history.SteppedDown, Text: "retired: this part of the experiment is over"})
	}
	r.stop()
	r.mu.Lock()
	r.crashed, r.role, r.lease = true, RoleRetired, nil
	r.mu.Unlock()
}

// Restart brings a crashed replica back with a fresh client and runs its
// body again.
func (r *Replica) Restart(by history.Origin) error {
	r.mu.Lock()
	if !r.crashed {
		r.mu.Unlock()
		return fmt.Errorf("restart %s: not crashed", r.Name)
	}
	r.role = RoleFollower
	err := r.startLocked()
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.Emit(history.Event{Kind: history.Restarted, Origin: by, Text: "restarted with a new client and no memory of its old lease"})
	return nil
}

// State returns a snapshot for display.
func (r *Replica) State() ReplicaState {
	r.mu.Lock()
	s := ReplicaState{Name: r.Name, Role: r.role, Token: r.token, Paused: r.paused,
		Partitioned: r.partitioned, Crashed: r.crashed, ClockRate: r.clockRate}
	l := r.lease
	r.mu.Unlock()
	if l != nil {
		s.LeaseTTL = l.TTL
		s.LeaseLeft = max(0, l.Left())
	}
	return s
}

// stop closes the replica for good at the end of a run.
func (r *Replica) stop() {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	if r.paused {
		r.paused = false
		close(r.gate)
	}
	cli := r.cli
	done := r.done
	r.mu.Unlock()
	if done != nil {
		<-done
	}
	r.keepers.Wait()
	r.dropClient(cli)
	for _, p := range r.proxies {
		p.Close()
	}
}

// StartWith runs a new body on a replica that is fresh or crashed (a
// crashed one gets a new client first).
func (r *Replica) StartWith(body Body) error {
	r.mu.Lock()
	was := r.crashed
	r.body = body
	r.role = RoleFollower
	err := r.startLocked()
	r.mu.Unlock()
	if err != nil || !was {
		return err
	}
	// The replica's state comes from its events: without this one the
	// timeline would draw it crashed while it runs its new body.
	r.Emit(history.Event{Kind: history.Restarted, Origin: history.ByScript, Text: "started again for this part, with a new client and no memory of its old lease"})
	return nil
}

// held says why the learner holds the replica down ("paused", "cut
// off"), or "" when it is free.
func (r *Replica) held() (why string, gate chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.paused:
		return "paused", r.gate
	case r.partitioned:
		return "cut off", nil
	}
	return "", nil
}

// Await is what a script calls before it uses the replica's client itself
// (not from the replica's body, whose own calls simply stand still): while
// the learner holds the replica paused or cut off, the script cannot take
// its next step, and it says so at once, naming the replica and the step,
// instead of hanging in silence. It returns when the replica is free again
// or ctx is done.
func (r *Replica) Await(ctx context.Context, step string) error {
	said := ""
	for {
		why, gate := r.held()
		if why == "" {
			if said != "" {
				r.Emit(history.Event{Kind: history.Waiting, Text: "the script goes on: " + r.Name + " is free"})
			}
			return ctx.Err()
		}
		if why != said {
			r.Emit(history.Event{Kind: history.Waiting, Value: 1, Text: fmt.Sprintf("the script waits for %s to %s: %s is %s", r.Name, step, r.Name, why)})
			said = why
		}
		if err := waitFree(ctx, gate); err != nil {
			return err
		}
	}
}

// AwaitAny is Await for a step any one of rs can take (a takeover): the
// script waits, and says so, only while the learner holds all of them.
func (run *Run) AwaitAny(ctx context.Context, rs []*Replica, step string) error {
	said := ""
	for {
		var held []string
		var gate chan struct{}
		for _, r := range rs {
			why, g := r.held()
			if why == "" {
				if said != "" {
					run.Emit(history.Event{Kind: history.Waiting, Text: "the script goes on: " + r.Name + " is free"})
				}
				return ctx.Err()
			}
			held = append(held, r.Name+" is "+why)
			if gate == nil {
				gate = g
			}
		}
		text := fmt.Sprintf("the script waits for one of %s to %s: %s", replicaNames(rs), step, strings.Join(held, ", "))
		if text != said {
			run.Emit(history.Event{Kind: history.Waiting, Value: 1, Text: text})
			said = text
		}
		if err := waitFree(ctx, gate); err != nil {
			return err
		}
	}
}

// waitFree waits for a pause to end (its gate closes) or, for a replica
// cut off, a little while before the caller looks again.
func waitFree(ctx context.Context, gate chan struct{}) error {
	if gate == nil {
		return Sleep(ctx, 50*time.Millisecond)
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(50 * time.Millisecond): // another of several may free first
		return nil
	}
}

func replicaNames(rs []*Replica) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return strings.Join(out, ", ")
}

// Run is the run the replica belongs to.
func (r *Replica) Run() *Run { return r.run }

// Keep runs f beside the replica's body, as a lease's keep-alive loop
// does: a crash, or the end of the run, waits for f to return before it
// closes the client f uses.
func (r *Replica) Keep(f func()) {
	r.keepers.Add(1)
	go func() {
		defer r.keepers.Done()
		f()
	}()
}

// Cancel cancels the context of the replica's body, as a shutdown tells
// a process to stop (SIGTERM): its code is asked to return. The replica
// is not crashed, and its client stays open until the body returns.
func (r *Replica) Cancel() {
	r.mu.Lock()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// MarkCrashed records that the replica's body is gone by itself (a lab
// run's replica process that exited): it counts as crashed from then
// on, and Restart starts it again.
func (r *Replica) MarkCrashed() {
	r.mu.Lock()
	r.crashed, r.role, r.token = true, RoleCrashed, 0
	r.mu.Unlock()
}

// Endpoints are the addresses of the replica's own fault proxies, one
// for each etcd endpoint: where its client, or a process that plays the
// replica, dials etcd.
func (r *Replica) Endpoints() []string {
	addrs := make([]string, len(r.proxies))
	for i, p := range r.proxies {
		addrs[i] = p.Addr()
	}
	return addrs
}
