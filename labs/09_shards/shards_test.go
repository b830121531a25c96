package shards

// Grader for lab 09. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness).
//
// Wrong solutions these tests defend against (the ones marked [mutant] are
// kept in solutions/09_shards/testdata/mutants and run by labcheck):
//   - a commit that checks only that the shard has some owner [mutant
//     exists_only.patch]: Steps 1 and 3 (the stale owner's offset lands).
//   - claiming every free shard and never giving any back [mutant
//     greedy.patch]: Step 2 (the first worker keeps all ten).
//   - a target of ceil(M/N) for every worker instead of by rank [mutant
//     ceil_target.patch]: Step 2 (ten shards end up 4, 4, 2).
//   - keeping the owned shards after the lease is lost [mutant
//     keeps_owned.patch]: Step 3 (a worker whose lease is gone still
//     believes it owns shards).
//   - reacting only to workers joining, not to shards being freed: Steps
//     2 and 3.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs/internal/etcdharness"
)

func TestMain(m *testing.M) { os.Exit(etcdharness.Main(m)) }

func TestStep1_CommitWithToken(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	cli := env.Client()
	prefix := env.Key("stream")
	hist := &etcdharness.History{}
	commit := func(who string, token, offset int64) error {
		err := CommitOffset(env.Ctx, cli, prefix, 3, token, offset)
		hist.Record(etcdharness.Write{Resource: "offset-3", Writer: who, Token: token, Accepted: err == nil})
		return err
	}

	leaseA := env.Grant(30)
	tokA := ownShard(t, env, prefix, 3, "worker-a", leaseA)
	if err := commit("worker-a", tokA, 100); err != nil {
		t.Fatalf("the owner's CommitOffset: %v", err)
	}
	if got := offset(t, env, prefix, 3); got != "100" {
		t.Fatalf("offset key holds %q, want \"100\"", got)
	}

	env.Revoke(leaseA) // worker-a dies; worker-b takes the shard
	if err := commit("worker-a", tokA, 90); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("CommitOffset after the owner's lease ended = %v, want ErrNotOwner", err)
	}
	tokB := ownShard(t, env, prefix, 3, "worker-b", env.Grant(30))
	if err := commit("worker-b", tokB, 120); err != nil {
		t.Fatalf("the new owner's CommitOffset: %v", err)
	}
	// worker-a's delayed commit arrives late.
	if err := commit("worker-a", tokA, 95); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("the old owner's CommitOffset with token %d while the shard is owned under token %d = %v, want ErrNotOwner", tokA, tokB, err)
	}
	if got := offset(t, env, prefix, 3); got != "120" {
		t.Fatalf("offset key holds %q, want the new owner's \"120\"", got)
	}
	if err := CommitOffset(env.Ctx, cli, prefix, 7, tokB, 1); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("CommitOffset for a shard nobody owns = %v, want ErrNotOwner", err)
	}
	if err := etcdharness.CheckTokenOrder(hist.Writes()); err != nil {
		t.Fatal(err)
	}
}

func TestStep2_BalancedOwnership(t *testing.T) {
	t.Parallel()
	env := etcdharness.New(t)
	f := newFleet(t, env, 10)
	f.start("worker-a", env.Client(), 5)
	f.waitBalanced(5*time.Second, "worker-a")
	f.start("worker-b", env.Client(), 5)
	f.waitBalanced(5*time.Second, "worker-a", "worker-b")
	f.start("worker-c", env.Client(), 5)
	f.waitBalanced(5*time.Second, "worker-a", "worker-b", "worker-c")

	// A worker that shuts down hands its shards over at once.
	f.stop("worker-a")
	if got := f.counts()["worker-a"]; got != 0 {
		t.Fatalf("worker-a's Run returned but it still owns %d shards in etcd", got)
	}
	f.waitBalanced(5*time.Second, "worker-b", "worker-c")
	f.checkOverlap()
}

func TestStep3_TakeoverAfterDeath(t *testing.T) {
	t.Parallel()
	const ttl = 2
	env := etcdharness.New(t)
	f := newFleet(t, env, 10)
	cliB := env.Client()
	f.start("worker-a", env.Client(), ttl)
	f.start("worker-b", cliB, ttl)
	f.start("worker-c", env.Client(), ttl)
	f.waitBalanced(5*time.Second, "worker-a", "worker-b", "worker-c")

	// worker-b's machine dies: its connection is gone for good, and etcd
	// ends its lease (forced with Revoke rather than waiting for the TTL).
	stale := f.workers["worker-b"].w.Owned()
	member, ok := env.Get(MemberKey(f.prefix, "worker-b"))
	if !ok {
		t.Fatalf("worker-b has no member key %s", MemberKey(f.prefix, "worker-b"))
	}
	f.exclude("worker-b")
	cliB.Close()
	env.Revoke(member.Lease)
	start := time.Now()

	bound := (ttl + 2) * time.Second
	f.waitBalanced(bound, "worker-a", "worker-c")
	t.Logf("worker-b's %d shards taken over in %v", len(stale), time.Since(start).Round(time.Millisecond))
	env.WaitFor(f.prefix, time.Duration(ttl+1)*time.Second, "worker-b, whose lease is gone, to own nothing", func() bool {
		return len(f.workers["worker-b"].w.Owned()) == 0
	})
	t.Logf("worker-b owned nothing after %v", time.Since(start).Round(time.Millisecond))

	// worker-b's last offset commit was delayed; it arrives now with b's
	// old token and must be refused, while the new owner's is accepted.
	shard := slices.Min(slices.Collect(maps.Keys(stale)))
	owner, _ := env.Get(ShardKey(f.prefix, shard))
	hist := &etcdharness.History{}
	newOwner := f.workers[owner.Value].w.Owned()[shard]
	if newOwner != owner.CreateRevision {
		t.Fatalf("%s owns shard %d in etcd with token %d but its Owned() says %d", owner.Value, shard, owner.CreateRevision, newOwner)
	}
	err := CommitOffset(env.Ctx, env.Admin, f.prefix, shard, newOwner, 500)
	hist.Record(etcdharness.Write{Resource: "offset", Writer: owner.Value, Token: newOwner, Accepted: err == nil})
	if err != nil {
		t.Fatalf("%s, the new owner of shard %d, could not commit: %v", owner.Value, shard, err)
	}
	err = CommitOffset(env.Ctx, env.Admin, f.prefix, shard, stale[shard], 400)
	hist.Record(etcdharness.Write{Resource: "offset", Writer: "worker-b", Token: stale[shard], Accepted: err == nil})
	if !errors.Is(err, ErrNotOwner) {
		t.Errorf("worker-b's late commit for shard %d with its old token %d = %v, want ErrNotOwner", shard, stale[shard], err)
	}
	if err := etcdharness.CheckTokenOrder(hist.Writes()); err != nil {
		t.Error(err)
	}
	if got := offset(t, env, f.prefix, shard); got != "500" {
		t.Errorf("shard %d's offset is %q, want the new owner's \"500\"", shard, got)
	}
	f.checkOverlap()
}

// ownShard makes name the owner of shard on lease, the way a worker claims
// it, and returns the token.
func ownShard(t *testing.T, env *etcdharness.Env, prefix string, shard int, name string, lease clientv3.LeaseID) int64 {
	t.Helper()
	key := ShardKey(prefix, shard)
	resp, err := env.Admin.Txn(env.Ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, name, clientv3.WithLease(lease))).
		Commit()
	if err != nil || !resp.Succeeded {
		t.Fatalf("test setup: claim %s for %s: err=%v", key, name, err)
	}
	return resp.Header.Revision
}

func offset(t *testing.T, env *etcdharness.Env, prefix string, shard int) string {
	t.Helper()
	kv, _ := env.Get(OffsetKey(prefix, shard))
	return kv.Value
}

// fleet runs workers over m shards and watches what they claim.
type fleet struct {
	t       *testing.T
	env     *etcdharness.Env
	prefix  string
	m       int
	workers map[string]*running

	mu       sync.Mutex
	excluded map[string]bool
	overlap  string // first moment two workers' Owned() shared a shard
}

type running struct {
	w        *Worker
	cancel   context.CancelFunc
	done     chan error
	stopping atomic.Bool
	early    atomic.Value // error: Run returned before it was stopped
}

func newFleet(t *testing.T, env *etcdharness.Env, m int) *fleet {
	return &fleet{t: t, env: env, prefix: env.Key("stream"), m: m,
		workers: map[string]*running{}, excluded: map[string]bool{}}
}

func (f *fleet) start(name string, cli *clientv3.Client, ttl int) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{w: &Worker{Client: cli, Prefix: f.prefix, Name: name, Shards: f.m, TTL: ttl},
		cancel: cancel, done: make(chan error, 1)}
	f.workers[name] = r
	go func() {
		err := r.w.Run(ctx)
		if !r.stopping.Load() {
			r.early.Store(fmt.Errorf("Run of %s returned %v before its context was cancelled; it should keep its share until then", name, err))
		}
		r.done <- err
	}()
	f.t.Cleanup(func() { f.stop(name) })
}

func (f *fleet) stop(name string) {
	r := f.workers[name]
	r.stopping.Store(true)
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil && !errors.Is(err, context.Canceled) && r.early.Load() == nil {
			f.t.Errorf("Run of %s returned %v, want nil", name, err)
		}
		r.done <- err // for a later stop
	case <-time.After(5 * time.Second):
		f.t.Errorf("Run of %s did not return within 5 s of its context being cancelled", name)
	}
}

// exclude stops checking a worker's Owned() for overlaps (it is dead; its
// view may lag until it notices).
func (f *fleet) exclude(name string) {
	f.mu.Lock()
	f.excluded[name] = true
	f.mu.Unlock()
}

// counts reads the shard keys from etcd: shards per owner name.
func (f *fleet) counts() map[string]int {
	c := map[string]int{}
	for _, kv := range f.env.List(f.prefix + "/shards/") {
		c[kv.Value]++
	}
	return c
}

// balanced reports whether every shard is owned by one of names, the
// counts differ by at most one, and each worker's Owned() agrees with etcd.
// It also records any moment at which two live workers' Owned() share a
// shard.
func (f *fleet) balanced(names []string) (bool, string) {
	f.sampleOverlap()
	etcd := map[string]map[int]int64{}
	for _, n := range names {
		etcd[n] = map[int]int64{}
	}
	kvs := f.env.List(f.prefix + "/shards/")
	for _, kv := range kvs {
		i, err := strconv.Atoi(strings.TrimPrefix(kv.Key, f.prefix+"/shards/"))
		if err != nil {
			return false, "unexpected key " + kv.Key
		}
		if etcd[kv.Value] == nil {
			return false, fmt.Sprintf("shard %d is owned by %q", i, kv.Value)
		}
		etcd[kv.Value][i] = kv.CreateRevision
	}
	if len(kvs) != f.m {
		return false, fmt.Sprintf("%d of %d shards are owned", len(kvs), f.m)
	}
	lo, hi := f.m, 0
	for _, n := range names {
		lo, hi = min(lo, len(etcd[n])), max(hi, len(etcd[n]))
		if got := f.workers[n].w.Owned(); !maps.Equal(got, etcd[n]) {
			return false, fmt.Sprintf("%s's Owned() = %v but etcd says it owns %v", n, got, etcd[n])
		}
	}
	if hi-lo > 1 {
		return false, fmt.Sprintf("owned counts range from %d to %d", lo, hi)
	}
	return true, ""
}

func (f *fleet) waitBalanced(d time.Duration, names ...string) {
	f.t.Helper()
	var why string
	var ok bool
	deadline := time.Now().Add(d)
	var early error
	f.env.WaitFor(f.prefix, d+time.Second, "balance", func() bool {
		for _, r := range f.workers {
			if e, _ := r.early.Load().(error); e != nil {
				early = e
				return true
			}
		}
		ok, why = f.balanced(names)
		return ok || time.Now().After(deadline)
	})
	if early != nil {
		f.t.Fatal(early)
	}
	if !ok {
		counts := f.counts()
		f.t.Fatalf("workers %v not balanced after %v: %s (shards per owner in etcd: %v)", names, d, why, counts)
	}
}

func (f *fleet) sampleOverlap() {
	seen := map[int]string{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, r := range f.workers {
		if f.excluded[name] {
			continue
		}
		for s := range r.w.Owned() {
			if other, ok := seen[s]; ok && f.overlap == "" {
				f.overlap = fmt.Sprintf("%s and %s both reported owning shard %d at the same moment", other, name, s)
			}
			seen[s] = name
		}
	}
}

func (f *fleet) checkOverlap() {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.overlap != "" {
		f.t.Error(f.overlap + ": forget a shard before you release it, and add it only after your claim succeeded")
	}
}
