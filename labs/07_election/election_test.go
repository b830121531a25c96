package election

// Grader for lab 7.2. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness), with faults:
// a revoked lease, an expired lease while a waiter is in line, a frozen
// network, and requests that fail. Every leader's work writes to a fenced
// register with its term's token; the history of those writes is checked
// for token order.
//
// Wrong solutions these tests defend against (mutants and learner bugs are
// kept in solutions/07_election/testdata and run by labcheck):
//   - trusting Campaign without re-reading the candidate's own key: Step 1
//     stages etcd issue 19597 (the waiter's lease is revoked, then the
//     leader resigns, and Campaign returns nil).
//   - checking the leader's value (e.Leader, the name) instead of the own
//     key's CreateRevision: Step 1 puts a second candidate with the same
//     name in line.
//   - checking only that a key exists at e.Key(), not its CreateRevision:
//     Step 1 writes B's key name again after B's lease is revoked.
//   - a failed read of the own key reported as ErrKeyLost, or returned
//     without %w: Step 1 fails the read SafeCampaign sends itself after
//     Campaign returned (Campaign's own reads go through, so the step
//     reaches the check).
//   - the lease ID, or the header revision of the check's Get, as the
//     token: Step 1 (the message says which it looks like).
//   - Campaign on context.Background(): Step 2 stops a candidate that
//     waits in line, and its Run must return within 3 s.
//   - Run returning ctx.Err() instead of nil: every stop checks for nil.
//   - resigning before the work has wound down, or with Run's cancelled
//     context, or not closing the session (the lease lives on): Step 2
//     holds each leader's work for a moment after its context ends and
//     watches what the candidate sends meanwhile, then reads back the key
//     and the lease.
//   - work whose context only follows Run's context, not the session;
//     returning after a lost term; a TTL other than Candidate.TTL: Step 3.
//   - a frozen leader that keeps working, or whose shutdown hangs on a
//     call with no bound (Resign with context.Background, a session whose
//     lease is granted with the client's context): Step 4.
//   - giving up, or retrying in a tight loop, when a session cannot be
//     made or a campaign fails; leaking the session of a failed round;
//     leaving the key when Resign fails: Step 5 makes those requests fail.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
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
	if term.Key != eA.Key() {
		t.Fatalf("term.Key = %q, want the candidate's own key e.Key() = %q", term.Key, eA.Key())
	}
	if term.Token != kv.CreateRevision {
		t.Fatalf("term.Token = %d, want %d, the key's CreateRevision (e.Rev()): %s", term.Token, kv.CreateRevision, tokenHint(env, term.Token, kv, sA.Lease()))
	}

	// B waits in line behind A, and so does a second candidate with the
	// same name (a restarted replica-b, on a new session). While B waits,
	// its lease is revoked (its key vanishes); then A resigns. etcd's
	// Campaign returns nil for B here, and the oldest key under the prefix
	// now carries the name "replica-b" too: only B's own key, at B's
	// revision, says whether B leads.
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
	sB2 := session(env.Client())
	if _, err := env.Admin.Put(env.Ctx, fmt.Sprintf("%s/%x", prefix, sB2.Lease()), "replica-b", clientv3.WithLease(sB2.Lease())); err != nil {
		t.Fatalf("test setup: queue the second replica-b: %v", err)
	}
	select {
	case r := <-res:
		t.Fatalf("SafeCampaign for B returned (%+v, %v) while A still leads", r.term, r.err)
	default:
	}
	env.Revoke(sB.Lease())
	// Someone writes B's key again (an operator, a bug): the key exists,
	// but it is not the one B's campaign created at e.Rev().
	if _, err := env.Admin.Put(env.Ctx, eB.Key(), "replica-b"); err != nil {
		t.Fatalf("test setup: rewrite B's key: %v", err)
	}
	if err := eA.Resign(env.Ctx); err != nil {
		t.Fatalf("test setup: A resign: %v", err)
	}
	select {
	case r := <-res:
		if r.err == nil {
			t.Fatalf("SafeCampaign for B = (%+v, nil) although B's own key is gone (its lease was revoked while it waited; a key of the same name was written again later, with a newer CreateRevision, and the oldest key now is another replica-b's): re-read your own key, e.Key(), and check that it exists AND that its CreateRevision equals e.Rev()", r.term)
		}
		if !errors.Is(r.err, ErrKeyLost) {
			t.Fatalf("SafeCampaign for B = %v, want ErrKeyLost: B's own key vanished while it waited", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SafeCampaign for B did not return within 5 s of A resigning")
	}

	// When etcd fails, SafeCampaign says so: first the campaign itself,
	// then the check of the candidate's own key after a campaign that
	// went through. Neither is a lost key, and neither is a win.
	injected := errors.New("injected by the test: etcd unavailable")
	for _, stage := range []string{"the campaign", "the check of its own key"} {
		cli := env.Client()
		spy := etcdharness.Attach(cli)
		s := session(cli)
		e := concurrency.NewElection(s, env.Key("failing", stage))
		own := fmt.Sprintf("%s/%x", env.Key("failing", stage), s.Lease())
		var checkFailed atomic.Bool
		spy.Intercept(func(r etcdharness.Request) error {
			// The campaign is the request that puts the candidate's key;
			// the check is a request SafeCampaign sends itself, once
			// Campaign has returned, that reads or compares that key and
			// writes nothing (a Get of e.Key(), e.Leader(), a
			// compare-only transaction). Campaign's own read of the
			// prefix (it waits for older keys) goes through: failing it
			// would fail the campaign, not the check.
			campaign := r.Puts()
			check := !r.Writes() && r.ReadsKey(own) && !etcdharness.InCall(campaignFunc)
			switch {
			case stage == "the campaign" && campaign:
				return injected
			case stage != "the campaign" && check:
				checkFailed.Store(true)
				return injected
			}
			return nil
		})
		tm, err := SafeCampaign(env.Ctx, s, e, "replica-c")
		if stage != "the campaign" && !checkFailed.Load() {
			t.Fatalf("SafeCampaign after a campaign that went through = (%+v, %v) without reading its own key: after Campaign returns, read e.Key() (a Get, e.Leader(), a transaction comparing its CreateRevision)", tm, err)
		}
		if err == nil || errors.Is(err, ErrKeyLost) || !errors.Is(err, injected) {
			t.Fatalf("SafeCampaign when etcd fails %s = (%+v, %v), want that failure, wrapped with %%w (not nil, not ErrKeyLost): a read that failed says nothing about the key, so it is not a lost key, and not a win", stage, tm, err)
		}
	}
}

// campaignFunc is etcd's Campaign as the runtime names it: requests sent
// from inside it are the campaign's own, not SafeCampaign's check.
const campaignFunc = "go.etcd.io/etcd/client/v3/concurrency.(*Election).Campaign"

func TestStep2_OneLeaderAtATime(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cl := newCluster(t, env)
	// Each leader's work takes a moment to wind down after its context
	// ends (a flush, say); the candidate must wait for it before it
	// resigns.
	cl.windDown = 30 * time.Millisecond
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
			stopWaiter(t, env, cl)
		}
		// Shut the leader down: Run must stop the work, wait for it,
		// resign, close its session, and return.
		leader.stop(t, 5*time.Second)
		select {
		case <-leader.ended:
		default:
			t.Fatalf("round %d: Run of %s returned while its Work was still running", round, leader.name)
		}
		if kv, ok := env.Get(term.Key); ok {
			t.Fatalf("round %d: Run of %s returned but its leader key is still there (%+v): resign on shutdown, with a context of your own (Run's is cancelled by then), so the next leader does not wait out a TTL", round, leader.name, kv)
		}
		if info, ok := env.Lease(keys[0].Lease); ok {
			t.Fatalf("round %d: Run of %s returned but its session's lease is still alive (%d s left): close the session (it revokes the lease) on the way out", round, leader.name, info.TTL)
		}
		delete(remaining, leader)
	}
	if v := cl.earlyStepDown.Load(); v != nil {
		t.Errorf("%s", *v)
	}
	if n := cl.maxActive.Load(); n > 1 {
		t.Errorf("%d leaders were working at the same moment during orderly handovers; want 1: wait for Work to return before you resign", n)
	}
	cl.checkHistory(t, "replica-a", "replica-b", "replica-c")
	workReturnsEarly(t, env)
}

// workReturnsEarly: a Work that returns on its own, before its context
// ends, ends the term: Run steps down and campaigns again, and Work is
// called once per term won.
func workReturnsEarly(t *testing.T, env *etcdharness.Env) {
	t.Helper()
	terms := make(chan Term, 4)
	c := &Candidate{Client: env.Client(), Prefix: env.Key("early"), Name: "replica-e", TTL: 5,
		Work: func(ctx context.Context, term Term) {
			select {
			case terms <- term:
			default:
			}
		}}
	ctx, cancel := context.WithCancel(env.Ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("Run of replica-e did not return within 5 s of its context being cancelled")
		}
	}()
	next := func(what string) Term {
		t.Helper()
		select {
		case tm := <-terms:
			return tm
		case err := <-done:
			t.Fatalf("Run of replica-e returned %v before it was asked to stop, %s", err, what)
		case <-time.After(5 * time.Second):
			t.Fatalf("replica-e's Work returned on its own, and 5 s later Run had not started %s: once Work returns the term is over; step down (resign) and campaign again", what)
		}
		panic("unreachable")
	}
	first := next("its first term")
	second := next("a new term")
	if second.Token == first.Token {
		t.Fatalf("Run called Work twice for one term (token %d): Work is called once per term won; when it returns, resign and campaign again", first.Token)
	}
	if kv, ok := env.Get(first.Key); ok && kv.CreateRevision == first.Token {
		t.Fatalf("replica-e started a second term (token %d) while the key of its first term (token %d) is still there: resign after Work returns", second.Token, first.Token)
	}
}

// stopWaiter adds a fourth candidate, waits until it is in line behind
// the others (inside Campaign), and stops it: Run must return nil within
// 3 s with its key and lease gone.
func stopWaiter(t *testing.T, env *etcdharness.Env, cl *cluster) {
	t.Helper()
	d := cl.add("replica-d", env.Client(), 5)
	var key etcdharness.KeyValue
	env.WaitFor(cl.prefix, 5*time.Second, "replica-d to be in line behind the three others", func() bool {
		keys := env.List(cl.prefix + "/")
		if len(keys) == 4 && keys[3].Value == "replica-d" {
			key = keys[3]
			return true
		}
		return false
	})
	d.stopping.Store(true)
	d.cancel()
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("Run of replica-d, stopped while it waited in line, returned %v, want nil", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("replica-d was waiting in line (inside Campaign, three candidates ahead of it) when its Run's context was cancelled, and Run had not returned 3 s later: Campaign returns only when it wins or its context ends, so campaign with a context that ends with Run's (not context.Background())")
	}
	if kv, ok := env.Get(key.Key); ok {
		t.Errorf("replica-d's Run returned but its candidate key is still in line (%+v): close the session on the way out (it revokes the lease and the key with it)", kv)
	}
	if _, ok := env.Lease(key.Lease); ok {
		t.Errorf("replica-d's Run returned but its session's lease is still alive: close the session on the way out, also when the round ended inside Campaign")
	}
}

// tokenHint says what a wrong term.Token looks like it came from.
func tokenHint(env *etcdharness.Env, token int64, kv etcdharness.KeyValue, lease clientv3.LeaseID) string {
	now, err := env.Admin.Get(env.Ctx, "\x00", clientv3.WithCountOnly())
	switch {
	case token == int64(lease) || token == int64(kv.Lease):
		return "it is the session's lease ID, which tells owners apart but does not order them"
	case token == kv.ModRevision && kv.ModRevision != kv.CreateRevision:
		return "it is the key's ModRevision, which moves whenever the key is written"
	case err == nil && token > kv.CreateRevision && token <= now.Header.Revision:
		return "it is a later store revision (a response header's Revision, say from the Get that checked the key), not the revision at which the key was created"
	case token == 0:
		return "it is 0, no token at all"
	}
	return "return e.Rev(), or the CreateRevision of the key you read back"
}

func TestStep3_StepsDownWhenSessionLost(t *testing.T) {
	t.Parallel()
	const ttl = 1 // the smallest TTL etcd grants
	env := etcdharness.New(t)
	cl := newCluster(t, env)
	cl.add("replica-a", env.Client(), ttl)
	cl.add("replica-b", env.Client(), ttl)
	leader, term := cl.waitStart(nil, 5*time.Second, "a leader")
	kv, ok := env.Get(term.Key)
	if !ok {
		t.Fatalf("%s works with term %+v but that key does not exist", leader.name, term)
	}
	// etcd raises a TTL below its minimum to that minimum: compare with
	// what it grants the test for the same TTL.
	want, _ := env.Lease(env.Grant(ttl))
	if info, ok := env.Lease(kv.Lease); !ok || info.GrantedTTL != want.GrantedTTL {
		t.Fatalf("%s's leader key is on a lease granted for %d s (exists=%v), want one granted with Candidate.TTL = %d s (etcd makes that %d s)", leader.name, info.GrantedTTL, ok, ttl, want.GrantedTTL)
	}
	env.WaitFor(cl.prefix, 5*time.Second, "the second candidate to be in line", func() bool {
		return len(env.List(cl.prefix+"/")) == 2
	})

	env.Revoke(kv.Lease) // the leader's session is over, as after a long pause
	bound := (ttl + 1) * time.Second
	select {
	case <-leader.ended:
	case <-time.After(bound):
		t.Fatalf("%s was still working %v after its session's lease was revoked: cancel Work's context when the session is done (s.Done())", leader.name, bound)
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
	spyA := etcdharness.Attach(cliA)
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
	// etcd ends A's lease (forced here with Revoke instead of waiting for
	// the TTL), and A's client gives up on its keepalives, which it does by
	// itself once it has heard nothing for a TTL (the test makes it happen
	// now rather than up to TTL+1 s later). From that moment A's session
	// is done, and A can learn nothing else: every request it sends hangs.
	proxy.Freeze()
	env.Revoke(kvA.Lease)
	lostAt, n := spyA.LoseKeepAlives()
	if n == 0 {
		t.Fatal("replica-a's client had no lease keepalive running while it led: make its session with Candidate.Client")
	}
	select {
	case at := <-a.ended:
		if d := at.Sub(lostAt); d > time.Second {
			t.Fatalf("replica-a's work stopped %v after its session ended; want it at once", d)
		}
	case <-time.After(time.Second):
		t.Fatal("replica-a, cut off from etcd, was still working 1 s after its session ended (s.Done() closed; its lease is gone in etcd): nothing else will tell it while the network is frozen, so cancel Work's context on s.Done()")
	}
	_, termB := cl.waitStart(func(r *replica, _ Term) bool { return r == b }, 5*time.Second, "replica-b to take over")
	if termB.Token <= termA.Token {
		t.Fatalf("replica-b's token %d is not above replica-a's %d", termB.Token, termA.Token)
	}

	// Shut A down while its network is still frozen: whatever it sends on
	// the way out (a resign, a revoke, the next round's lease grant) hangs
	// until its own bound, or Run's context, ends it.
	a.stop(t, 3*time.Second)
	proxy.Thaw()
	cl.stopAll(t)
	cl.checkHistory(t, "replica-a", "replica-b")
}

func TestStep5_KeepsTryingWhenEtcdFails(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cl := newCluster(t, env)
	cli := env.Client()
	spy := etcdharness.Attach(cli)
	injected := errors.New("injected by the test: etcd unavailable")

	// First every lease grant fails for a while (no session can be made),
	// then a session's keepalive cannot be started (NewSession fails after
	// the grant), then the first two campaigns fail, then, on the way out,
	// the resign.
	var mu sync.Mutex
	failGrants, failKeepAlives, failCampaigns, failResign := true, 1, 2, false
	spy.Intercept(func(r etcdharness.Request) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Kind == etcdharness.KindGrant && failGrants:
			return injected
		case r.Kind == etcdharness.KindKeepAlive && !failGrants && failKeepAlives > 0:
			failKeepAlives--
			return injected
		case r.Puts() && failCampaigns > 0:
			failCampaigns--
			return injected
		case r.Deletes() && failResign:
			return injected
		}
		return nil
	})
	a := cl.add("replica-a", cli, 5)

	const window = 200 * time.Millisecond
	select {
	case e := <-cl.exits:
		t.Fatalf("Run of %s returned %v while no session could be made; it should wait a little and try again until its context is done", e.r.name, e.err)
	case <-time.After(window):
	}
	tries := spy.Grants.Load()
	mu.Lock()
	failGrants = false
	mu.Unlock()
	if tries == 0 {
		t.Fatal("replica-a asked for no lease in 200 ms: make a session (it grants a lease) with Candidate.Client")
	}
	if tries > 20 {
		t.Fatalf("replica-a asked for a lease %d times in %v while every grant failed: wait between attempts (tens of milliseconds or more) instead of spinning", tries, window)
	}
	_, term := cl.waitStart(func(r *replica, _ Term) bool { return r == a }, 5*time.Second, "replica-a to lead once etcd answered again (it should keep retrying after failed campaigns too)")

	// Every session of a failed round was given up: its lease is gone.
	kv, ok := env.Get(term.Key)
	if !ok {
		t.Fatalf("replica-a works with term %+v but that key does not exist", term)
	}
	env.WaitFor(cl.prefix, 2*time.Second, "the leases of replica-a's failed rounds to be revoked (including the one granted for a session that NewSession could not start)", func() bool {
		for _, id := range spy.Granted() {
			if id == kv.Lease {
				continue
			}
			if _, ok := env.Lease(id); ok {
				return false
			}
		}
		return true
	})

	// The resign fails on the way out: the key must go all the same, with
	// the session's lease.
	mu.Lock()
	failResign = true
	mu.Unlock()
	a.stop(t, 5*time.Second)
	if got, ok := env.Get(term.Key); ok {
		t.Fatalf("Resign failed and Run returned, but replica-a's leader key is still there (%+v): close the session (revoking its lease deletes the key) even when Resign fails", got)
	}
	if _, ok := env.Lease(kv.Lease); ok {
		t.Fatal("Resign failed and Run returned, but replica-a's session lease is still alive: close the session even when Resign fails")
	}
	cl.checkHistory(t, "replica-a")
}

// cluster is the test's view of several candidates sharing one election
// and one fenced register.
type cluster struct {
	t             *testing.T
	prefix        string
	reg           *etcdharness.Register
	hist          *etcdharness.History
	starts        chan start
	exits         chan exit
	active        atomic.Int32
	maxActive     atomic.Int32
	replicas      []*replica
	windDown      time.Duration          // how long Work takes to return after its context ends
	earlyStepDown atomic.Pointer[string] // the first resign or revoke sent while Work still ran
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
	ended    chan time.Time // one per term: when Work saw its context end
	done     chan error     // Run's result
	working  atomic.Bool    // Work has been called and has not returned
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
	if cl.windDown > 0 {
		// Watch what the candidate sends while its work winds down: a
		// resign or a revoke then lets the next leader start too early.
		etcdharness.Attach(cli).Intercept(func(req etcdharness.Request) error {
			if r.working.Load() && (req.Kind == etcdharness.KindRevoke || req.Deletes()) {
				what := "request deleting its key (a resign)"
				if req.Kind == etcdharness.KindRevoke {
					what = "lease revoke (a session close)"
				}
				msg := fmt.Sprintf("%s sent a %s to etcd while its Work had not returned yet (it was winding down after its context ended): wait for Work to return before you resign or close the session", name, what)
				cl.earlyStepDown.CompareAndSwap(nil, &msg)
			}
			return nil
		})
	}
	c := &Candidate{Client: cli, Prefix: cl.prefix, Name: name, TTL: ttl,
		Work: func(ctx context.Context, term Term) {
			r.working.Store(true)
			defer r.working.Store(false)
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
					r.ended <- time.Now()
					if cl.windDown > 0 {
						time.Sleep(cl.windDown) // stands for a flush; not what is measured
					}
					cl.active.Add(-1)
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
	cl.t.Cleanup(func() { r.stop(cl.t, 5*time.Second) })
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

// stop cancels the replica's Run and waits up to d for it to return nil.
func (r *replica) stop(t *testing.T, d time.Duration) {
	t.Helper()
	if r.stopping.Swap(true) {
		return
	}
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil && !r.early.Load() {
			t.Errorf("Run of %s returned %v after its context was cancelled, want nil: Run returns nil once its context is done and it has stepped down (the context's error is not a failure of Run)", r.name, err)
		}
	case <-time.After(d):
		t.Errorf("Run of %s did not return within %v of its context being cancelled: bound every call on the way out (Resign, the lease revoke, the next session's grant) by a timeout of its own or by Run's context", r.name, d)
	}
}

func (cl *cluster) stopAll(t *testing.T) {
	t.Helper()
	for _, r := range cl.replicas {
		r.stop(t, 5*time.Second)
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
