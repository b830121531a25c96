package election

// Grader for lab 07. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness), with faults:
// a revoked lease, an expired lease while a waiter is in line, and a frozen
// network. Every leader's work writes to a fenced register with its term's
// token; the history of those writes is checked for token order.
//
// Wrong solutions these tests defend against (the ones marked [mutant] are
// kept in solutions/07_election/testdata/mutants and run by labcheck):
//   - trusting Campaign without re-reading the candidate's own key [mutant
//     no_recheck.patch]: Step 1 stages etcd issue 19597 (the waiter's lease is
//     revoked, then the leader resigns, and Campaign returns nil).
//   - the lease ID as the token [mutant lease_token.patch]: Step 1.
//   - work whose context only follows Run's context, not the session
//     [mutant work_ignores_session.patch]: Steps 3 and 4 (the old leader
//     keeps working after its lease is gone).
//   - returning from Run, or not campaigning again, after a lost term
//     [mutant no_recampaign.patch]: Steps 3 and 4.
//   - leaving the session open on shutdown without resigning [mutant
//     no_resign.patch]: Step 2 (the key stays, the next leader waits a TTL).
//   - resigning before the work has returned: Step 2 counts leaders at
//     work at once and must never see two.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/labs/internal/etcdharness"
)

func TestMain(m *testing.M) { os.Exit(etcdharness.Main(m)) }

func TestStep1_SafeCampaign(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	prefix := env.Key("election")
	session := func(cli *clientv3.Client) *concurrency.Session {
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatalf("test setup: new session: %v", err)
		}
		t.Cleanup(s.Orphan)
		return s
	}

	// A wins an empty election.
	sA := session(env.Client())
	eA := concurrency.NewElection(sA, prefix)
	term, err := SafeCampaign(env.Ctx, sA, eA, "replica-a")
	if err != nil {
		t.Fatalf("SafeCampaign in an empty election: %v", err)
	}
	kv, ok := env.Get(term.Key)
	if !ok || kv.Value != "replica-a" {
		t.Fatalf("SafeCampaign returned term %+v but that key is %+v (exists=%v)", term, kv, ok)
	}
	if term.Key != eA.Key() || term.Token != kv.CreateRevision {
		t.Fatalf("term = %+v, want {Key: %s, Token: %d} (the key's CreateRevision, not the lease ID)", term, eA.Key(), kv.CreateRevision)
	}

	// B waits in line behind A. While it waits, its lease is revoked (its
	// key vanishes); then A resigns. etcd's Campaign returns nil here.
	sB := session(env.Client())
	eB := concurrency.NewElection(sB, prefix)
	type result struct {
		term Term
		err  error
	}
	res := make(chan result, 1)
	go func() {
		tm, err := SafeCampaign(env.Ctx, sB, eB, "replica-b")
		res <- result{tm, err}
	}()
	env.WaitFor(prefix, 5*time.Second, "B's candidate key to appear behind A's", func() bool {
		return len(env.List(prefix+"/")) == 2
	})
	select {
	case r := <-res:
		t.Fatalf("SafeCampaign for B returned (%+v, %v) while A still leads", r.term, r.err)
	default:
	}
	env.Revoke(sB.Lease())
	if err := eA.Resign(env.Ctx); err != nil {
		t.Fatalf("A resign: %v", err)
	}
	select {
	case r := <-res:
		if r.err == nil {
			t.Fatalf("SafeCampaign for B = (%+v, nil) although B's key is gone: re-read your own key after Campaign returns", r.term)
		}
		if !errors.Is(r.err, ErrKeyLost) {
			t.Fatalf("SafeCampaign for B = %v, want ErrKeyLost", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SafeCampaign for B did not return within 5 s of A resigning")
	}
}

func TestStep2_OneLeaderAtATime(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cl := newCluster(t, env)
	remaining := map[*replica]bool{}
	for _, name := range []string{"replica-a", "replica-b", "replica-c"} {
		remaining[cl.add(name, env.Client(), 5)] = true
	}
	var prev int64
	for round := range 3 {
		leader, term := cl.waitStart(func(r *replica, _ Term) bool { return remaining[r] }, 5*time.Second, "a leader")
		keys := env.List(cl.prefix + "/")
		if len(keys) == 0 || keys[0].Key != term.Key || keys[0].Value != leader.name {
			t.Fatalf("round %d: %s works with term %+v, but the oldest candidate key is %+v", round, leader.name, term, keys)
		}
		if term.Token != keys[0].CreateRevision {
			t.Fatalf("round %d: term token %d, want the leader key's CreateRevision %d", round, term.Token, keys[0].CreateRevision)
		}
		if term.Token <= prev {
			t.Fatalf("round %d: token %d is not above the previous leader's %d", round, term.Token, prev)
		}
		prev = term.Token
		if round == 0 {
			env.WaitFor(cl.prefix, 5*time.Second, "all three candidates to be in line", func() bool {
				return len(env.List(cl.prefix+"/")) == 3
			})
		}
		// Shut the leader down: Run must stop the work, resign, and return.
		leader.stop(t)
		select {
		case <-leader.ended:
		default:
			t.Fatalf("round %d: Run of %s returned while its Work was still running", round, leader.name)
		}
		if kv, ok := env.Get(term.Key); ok {
			t.Fatalf("round %d: Run of %s returned but its leader key is still there (%+v): resign on shutdown so the next leader does not wait out a TTL", round, leader.name, kv)
		}
		delete(remaining, leader)
	}
	if n := cl.maxActive.Load(); n > 1 {
		t.Errorf("%d leaders were working at the same moment during orderly handovers; want 1", n)
	}
	cl.checkHistory(t, "replica-a", "replica-b", "replica-c")
}

func TestStep3_StepsDownWhenSessionLost(t *testing.T) {
	t.Parallel()
	const ttl = 2
	env := etcdharness.New(t)
	cl := newCluster(t, env)
	cl.add("replica-a", env.Client(), ttl)
	cl.add("replica-b", env.Client(), ttl)
	leader, term := cl.waitStart(nil, 5*time.Second, "a leader")
	kv, ok := env.Get(term.Key)
	if !ok {
		t.Fatalf("%s works with term %+v but that key does not exist", leader.name, term)
	}
	env.WaitFor(cl.prefix, 5*time.Second, "the second candidate to be in line", func() bool {
		return len(env.List(cl.prefix+"/")) == 2
	})

	env.Revoke(kv.Lease) // the leader's session is over, as after a long pause
	bound := (ttl + 1) * time.Second
	select {
	case <-leader.ended:
	case <-time.After(bound):
		t.Fatalf("%s was still working %v after its session's lease was revoked: cancel Work's context when the session is done", leader.name, bound)
	}
	_, next := cl.waitStart(func(_ *replica, tm Term) bool { return tm.Token > term.Token }, 5*time.Second, "a new leader with a newer token")
	env.WaitFor(cl.prefix, 5*time.Second, leader.name+" to campaign again with a new session", func() bool {
		for _, k := range env.List(cl.prefix + "/") {
			if k.Value == leader.name && k.Lease != kv.Lease && k.CreateRevision > term.Token {
				return true
			}
		}
		return false
	})
	cl.stopAll(t)
	if next.Token <= term.Token {
		t.Fatalf("new term %+v does not have a newer token than %+v", next, term)
	}
	cl.checkHistory(t)
}

func TestStep4_FrozenLeader(t *testing.T) {
	t.Parallel()
	const ttl = 1
	env := etcdharness.New(t)
	cl := newCluster(t, env)
	cliA, proxy := env.ProxiedClient()
	a := cl.add("replica-a", cliA, ttl)
	_, termA := cl.waitStart(func(r *replica, _ Term) bool { return r == a }, 5*time.Second, "replica-a to lead")
	kvA, ok := env.Get(termA.Key)
	if !ok {
		t.Fatalf("replica-a works with term %+v but that key does not exist", termA)
	}
	b := cl.add("replica-b", env.Client(), 5)
	env.WaitFor(cl.prefix, 5*time.Second, "replica-b to be in line", func() bool {
		return len(env.List(cl.prefix+"/")) == 2
	})

	// A's network freezes: no keepalive reaches etcd, no answer reaches A.
	// Nothing is revoked; etcd expires A's lease after its TTL.
	proxy.Freeze()
	env.WaitFor(cl.prefix, 5*time.Second, "replica-a's lease to expire in etcd", func() bool {
		_, ok := env.Get(termA.Key)
		return !ok
	})
	bound := (ttl + 1) * time.Second
	select {
	case <-a.ended:
	case <-time.After(bound):
		t.Fatalf("replica-a, cut off from etcd, was still working %v after etcd expired its lease: its session is done, so its work must stop", bound)
	}
	_, termB := cl.waitStart(func(r *replica, _ Term) bool { return r == b }, 5*time.Second, "replica-b to take over")
	if termB.Token <= termA.Token {
		t.Fatalf("replica-b's token %d is not above replica-a's %d", termB.Token, termA.Token)
	}

	proxy.Thaw()
	env.WaitFor(cl.prefix, 5*time.Second, "replica-a to campaign again once its network is back", func() bool {
		for _, k := range env.List(cl.prefix + "/") {
			if k.Value == "replica-a" && k.Lease != kvA.Lease {
				return true
			}
		}
		return false
	})
	cl.stopAll(t)
	cl.checkHistory(t, "replica-a", "replica-b")
}

// cluster is the test's view of several candidates sharing one election
// and one fenced register.
type cluster struct {
	t         *testing.T
	prefix    string
	reg       *etcdharness.Register
	hist      *etcdharness.History
	starts    chan start
	exits     chan exit
	active    atomic.Int32
	maxActive atomic.Int32
	replicas  []*replica
}

type start struct {
	r    *replica
	term Term
}

type exit struct {
	r   *replica
	err error
}

// replica is one Candidate plus what the test observes of it.
type replica struct {
	name     string
	cancel   context.CancelFunc
	ended    chan time.Time // one per term whose context was cancelled
	done     chan error     // Run's result
	stopping atomic.Bool
	early    atomic.Bool // Run returned before stop was called (reported)
}

func newCluster(t *testing.T, env *etcdharness.Env) *cluster {
	hist := &etcdharness.History{}
	return &cluster{
		t:      t,
		prefix: env.Key("election"),
		reg:    &etcdharness.Register{Name: "register", History: hist},
		hist:   hist,
		starts: make(chan start, 64),
		exits:  make(chan exit, 16),
	}
}

// add starts a candidate whose work writes to the register every 5 ms
// under its term's token until its context is cancelled.
func (cl *cluster) add(name string, cli *clientv3.Client, ttl int) *replica {
	r := &replica{name: name, ended: make(chan time.Time, 64), done: make(chan error, 1)}
	c := &Candidate{Client: cli, Prefix: cl.prefix, Name: name, TTL: ttl,
		Work: func(ctx context.Context, term Term) {
			n := cl.active.Add(1)
			for {
				m := cl.maxActive.Load()
				if n <= m || cl.maxActive.CompareAndSwap(m, n) {
					break
				}
			}
			cl.starts <- start{r, term}
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for seq := 0; ; seq++ {
				cl.reg.Write(name, term.Token, fmt.Sprintf("%s#%d", name, seq))
				select {
				case <-ctx.Done():
					cl.active.Add(-1)
					r.ended <- time.Now()
					return
				case <-tick.C:
				}
			}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		err := c.Run(ctx)
		if !r.stopping.Load() {
			r.early.Store(true)
			cl.exits <- exit{r, err}
		}
		r.done <- err
	}()
	cl.replicas = append(cl.replicas, r)
	cl.t.Cleanup(func() { r.stop(cl.t) })
	return r
}

// waitStart waits for a term to start that matches (nil matches any).
func (cl *cluster) waitStart(match func(*replica, Term) bool, d time.Duration, what string) (*replica, Term) {
	cl.t.Helper()
	timeout := time.After(d)
	for {
		select {
		case s := <-cl.starts:
			if match == nil || match(s.r, s.term) {
				return s.r, s.term
			}
		case e := <-cl.exits:
			cl.t.Fatalf("Run of %s returned %v before it was asked to stop; it should keep campaigning until its context is done", e.r.name, e.err)
		case <-timeout:
			cl.t.Fatalf("waited %v for %s", d, what)
		}
	}
}

// stop cancels the replica's Run and waits for it to return nil.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if r.stopping.Swap(true) {
		return
	}
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil && !errors.Is(err, context.Canceled) && !r.early.Load() {
			t.Errorf("Run of %s returned %v after its context was cancelled, want nil", r.name, err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Run of %s did not return within 5 s of its context being cancelled", r.name)
	}
}

func (cl *cluster) stopAll(t *testing.T) {
	t.Helper()
	for _, r := range cl.replicas {
		r.stop(t)
	}
}

// checkHistory checks token order in the register's history and that each
// named writer got at least one write accepted.
func (cl *cluster) checkHistory(t *testing.T, writers ...string) {
	t.Helper()
	if err := etcdharness.CheckTokenOrder(cl.hist.Writes()); err != nil {
		t.Error(err)
	}
	for _, w := range writers {
		if cl.hist.Accepted(w) == 0 {
			t.Errorf("%s never had a write accepted during its term: is Term.Token the leader key's CreateRevision?", w)
		}
	}
}
