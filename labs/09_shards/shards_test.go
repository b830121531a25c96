package shards

// Grader for lab 9.1. Each TestStepK checks one step of README.md against a
// real etcd started by the test (labs/internal/etcdharness). Every worker's
// client goes through a spy that sees each request before it is sent: the
// test checks the worker's Owned() at the moment it claims or releases a
// shard, steps in as a competitor between two requests, makes requests
// fail, and ends keep-alives as the client does when etcd is unreachable.
//
// Wrong solutions these tests defend against (planted mutants live in
// solutions/09_shards/testdata/mutants, learner bugs in testdata/bugs;
// labcheck runs both):
//   - a commit that checks only that the shard has some owner, accepts
//     token 0 for a shard nobody owns, or reads and then writes in two
//     requests: Step 1.
//   - claiming every free shard and never giving any back, ceil(M/N) for
//     everyone, reacting only to joins (the test holds worker-a's releases
//     until worker-b has read and is watching): Step 2.
//   - claiming with a plain put (the test claims the shard between the
//     worker's read and its claim), listing a shard before the claim
//     succeeded, only at the next read after it succeeded, or after its
//     release was sent: Step 2 (and every fleet test, at each read).
//   - claiming more than the target and giving the extras back; keeping a
//     shard in Owned() that the last read showed is not the worker's (an
//     operator handed it to another): Step 2.
//   - a watch started "now" instead of at the read's revision + 1: Step 2
//     frees a shard just before the first watch is set up.
//   - ranks by join order instead of by name: Step 2 (worker-z joins
//     first; worker-a is first by name).
//   - Run returning ctx.Err() instead of nil: every stop checks for nil.
//   - releases and claims are recognised wherever they sit in a request
//     (nested OpTxns, Do), reads whatever their shape.
//   - a shutdown that does not revoke the lease (or revokes it with the
//     cancelled context), or still lists shards when it revokes: Step 2.
//   - keeping the owned shards after the session ends, clearing them only
//     once etcd answers again, not rejoining: Step 3.
//   - taking keys with the worker's name but another lease for its own:
//     Step 3.
//   - retrying a failed session at once (a spin), giving up on the first
//     error, a shutdown that hangs while etcd is unreachable, retries a
//     failing revoke forever, or keeps the lease alive after a failed
//     revoke: Step 4.

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

// Every subtest may run at once: they wait on etcd, not on the processor.
func TestMain(m *testing.M) { os.Exit(etcdharness.MainParallel(m, 16)) }

// errInjected is what a request the test makes fail returns.
var errInjected = errors.New("injected by the test: etcd unavailable")

func TestStep1_CommitWithToken(t *testing.T) {
	t.Parallel()
	t.Run("tokens", func(t *testing.T) { t.Parallel(); testCommitTokens(t) })
	t.Run("owner changes between requests", func(t *testing.T) { t.Parallel(); testCommitCompetitor(t) })
}

func TestStep2_BalancedOwnership(t *testing.T) {
	t.Parallel()
	t.Run("join and leave", func(t *testing.T) { t.Parallel(); testJoinAndLeave(t) })
	t.Run("claimed between read and claim", func(t *testing.T) { t.Parallel(); testClaimRace(t) })
	t.Run("lease lost before a release", func(t *testing.T) { t.Parallel(); testStaleRelease(t) })
	t.Run("shard taken away", func(t *testing.T) { t.Parallel(); testShardTakenAway(t) })
	t.Run("change between read and watch", func(t *testing.T) { t.Parallel(); testChangeBeforeWatch(t) })
	t.Run("rank by name", func(t *testing.T) { t.Parallel(); testRankByName(t) })
}

func TestStep3_TakeoverAfterDeath(t *testing.T) {
	t.Parallel()
	t.Run("death and return", func(t *testing.T) { t.Parallel(); testDeathAndReturn(t) })
	t.Run("same name, other lease", func(t *testing.T) { t.Parallel(); testSameNameOtherLease(t) })
	t.Run("member key deleted", func(t *testing.T) { t.Parallel(); testMemberKeyDeleted(t) })
}

func TestStep4_FailuresAndShutdown(t *testing.T) {
	t.Parallel()
	t.Run("session cannot be created", func(t *testing.T) { t.Parallel(); testSessionFailures(t) })
	t.Run("read fails after a change", func(t *testing.T) { t.Parallel(); testReadFailsAfterChange(t) })
	t.Run("stop while etcd is unreachable", func(t *testing.T) { t.Parallel(); testStopUnreachable(t) })
	t.Run("revoke fails", func(t *testing.T) { t.Parallel(); testRevokeFails(t) })
}

func testCommitTokens(t *testing.T) {
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
		t.Fatalf("the owner's CommitOffset with its token %d: %v, want nil", tokA, err)
	}
	if got := offset(env, prefix, 3); got != "100" {
		t.Fatalf("after the owner committed 100, the offset key holds %q, want \"100\" (strconv.FormatInt(offset, 10))", got)
	}

	env.Revoke(leaseA) // worker-a dies; worker-b takes the shard
	if err := commit("worker-a", tokA, 90); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("CommitOffset after the owner's lease ended (the shard key is gone) = %v, want ErrNotOwner", err)
	}
	tokB := ownShard(t, env, prefix, 3, "worker-b", env.Grant(30))
	if err := commit("worker-b", tokB, 120); err != nil {
		t.Fatalf("the new owner's CommitOffset: %v", err)
	}
	// worker-a's delayed commit arrives late.
	if err := commit("worker-a", tokA, 95); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("the old owner's CommitOffset with token %d while the shard is owned under token %d = %v, want ErrNotOwner: compare the shard key's CreateRevision with the token, not just that it exists", tokA, tokB, err)
	}
	if got := offset(env, prefix, 3); got != "120" {
		t.Fatalf("offset key holds %q, want the new owner's \"120\"", got)
	}
	if err := CommitOffset(env.Ctx, cli, prefix, 7, tokB, 1); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("CommitOffset for a shard nobody owns = %v, want ErrNotOwner", err)
	}
	// Token 0 is what Owned()[shard] gives for a shard the worker does not
	// own. An absent key's CreateRevision is 0 too, so 0 == 0 must not be
	// taken for ownership.
	if err := CommitOffset(env.Ctx, cli, prefix, 7, 0, 1); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("CommitOffset with token 0 for a shard nobody owns = %v, want ErrNotOwner: a missing key's CreateRevision is also 0, so refuse tokens <= 0 (0 is what Owned()[s] gives for a shard you do not own)", err)
	}
	if kv, ok := env.Get(OffsetKey(prefix, 7)); ok {
		t.Fatalf("the offset of shard 7, which nobody owns, was written (%q)", kv.Value)
	}
	if err := etcdharness.CheckTokenOrder(hist.Writes()); err != nil {
		t.Fatal(err)
	}
}

// testCommitCompetitor: between any two requests CommitOffset sends, the
// shard changes owner. One transaction sends one request and is never
// interrupted.
func testCommitCompetitor(t *testing.T) {
	env := etcdharness.New(t)
	prefix := env.Key("stream")
	cli := env.Client()
	spy := etcdharness.Attach(cli)
	leaseA := env.Grant(30)
	tokA := ownShard(t, env, prefix, 2, "worker-a", leaseA)

	var requests atomic.Int64
	var tokB atomic.Int64
	spy.Intercept(func(r etcdharness.Request) error {
		if requests.Add(1) != 2 {
			return nil
		}
		// worker-a is paused between its requests; its lease ends and
		// worker-b claims the shard.
		if _, err := env.Admin.Revoke(env.Ctx, leaseA); err != nil {
			return fmt.Errorf("test: revoke: %w", err)
		}
		lease, err := env.Admin.Grant(env.Ctx, 30)
		if err != nil {
			return fmt.Errorf("test: grant: %w", err)
		}
		key := ShardKey(prefix, 2)
		resp, err := env.Admin.Txn(env.Ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, "worker-b", clientv3.WithLease(lease.ID))).Commit()
		if err != nil {
			return fmt.Errorf("test: claim for worker-b: %w", err)
		}
		tokB.Store(resp.Header.Revision)
		return nil
	})
	err := CommitOffset(env.Ctx, cli, prefix, 2, tokA, 200)
	n := requests.Load()
	switch {
	case n < 2 && err != nil:
		t.Fatalf("the owner's CommitOffset = %v, want nil", err)
	case n >= 2 && offset(env, prefix, 2) == "200":
		t.Fatalf("CommitOffset sent %d requests; between the first and the second the shard changed owner (worker-b, token %d), and worker-a's offset 200 with its old token %d was still written (err = %v): check the token and write the offset in one transaction", n, tokB.Load(), tokA, err)
	case n >= 2 && !errors.Is(err, ErrNotOwner):
		t.Fatalf("CommitOffset after the shard changed owner between its requests = %v, want ErrNotOwner", err)
	}

	// etcd refuses the request: the commit did not happen, and the caller
	// must hear so (but not ErrNotOwner: nobody said the shard is lost).
	spy.Intercept(func(etcdharness.Request) error { return errInjected })
	owner, _ := env.Get(ShardKey(prefix, 2))
	err = CommitOffset(env.Ctx, cli, prefix, 2, owner.CreateRevision, 300)
	switch {
	case err == nil:
		t.Fatalf("CommitOffset returned nil although etcd refused its request (%v): the offset was not stored, return the error", errInjected)
	case errors.Is(err, ErrNotOwner):
		t.Fatalf("CommitOffset returned ErrNotOwner when etcd refused its request: that tells the caller it lost the shard, which nobody knows; return the request's error (wrapped)")
	}
}

// testJoinAndLeave: a worker alone takes everything; joins and a clean
// leave rebalance; releases, claims and the shutdown are checked at the
// moment their requests are sent.
func testJoinAndLeave(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 10)
	a := f.start("worker-a", env.Client(), 5)
	f.waitBalanced(5*time.Second, "a worker alone takes every shard", "worker-a")

	// worker-a may give shards back only once worker-b has read the shard
	// keys and started watching: a worker that reacts only to joins then
	// never sees them come free.
	bReady := make(chan struct{})
	var readyOnce sync.Once
	var bRead atomic.Bool
	a.hook(func(r etcdharness.Request) error {
		if _, release := f.shardWrite(r); release {
			select {
			case <-bReady:
			case <-time.After(3 * time.Second):
			}
		}
		return nil
	})
	f.start("worker-b", env.Client(), 5, func(r etcdharness.Request) error {
		switch {
		case r.Kind == etcdharness.KindWatch:
			if bRead.Load() {
				readyOnce.Do(func() { close(bReady) })
			}
		case r.Reads():
			bRead.Store(true)
		}
		return nil
	})
	f.waitBalanced(5*time.Second, "worker-b joined worker-a. The test let worker-a's releases through only once worker-b had read and started watching, so worker-b must claim them when it sees their keys deleted: rebalance after every watch response, not only when a worker joins", "worker-a", "worker-b")
	a.hook(nil)
	f.start("worker-c", env.Client(), 5)
	f.waitBalanced(5*time.Second, "ten shards over three workers sorted by name: 4, 3, 3", "worker-a", "worker-b", "worker-c")

	// A worker that shuts down hands its shards over at once.
	b, c := f.workers["worker-b"], f.workers["worker-c"]
	relB, relC := b.releases.Load(), c.releases.Load()
	f.stop("worker-a")
	if got := len(a.w.Owned()); got != 0 {
		t.Errorf("worker-a's Run returned but its Owned() still lists %d shards", got)
	}
	if got := f.counts()["worker-a"]; got != 0 {
		t.Fatalf("worker-a's Run returned but %d shard keys are still on its lease in etcd: the others wait a whole TTL for them. Revoke the lease on the way out, with a context of its own (Run's context is already cancelled by then)", got)
	}
	f.waitBalanced(5*time.Second, "worker-a left: its shards go to the other two", "worker-b", "worker-c")
	for _, r := range []struct {
		w      *running
		before int64
	}{{b, relB}, {c, relC}} {
		if n := r.w.releases.Load() - r.before; n > 0 {
			t.Errorf("after worker-a left, %s gave back %d shards although its target only rose (3 to 5): it claimed more than its target. Claim only while you own fewer than your target, and count each claim that succeeded", r.w.name, n)
		}
	}
	f.check()
}

// testClaimRace: between worker-a's read and its claim of a free shard,
// another worker claims that shard.
func testClaimRace(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 4)
	leaseZ := env.Grant(30)
	var raced atomic.Int64 // the shard worker-z took, +1 (0: none yet)
	var tokZ atomic.Int64
	var raceErr atomic.Value
	a := f.start("worker-a", env.Client(), 5, func(r etcdharness.Request) error {
		shard, release := f.shardWrite(r)
		if shard < 0 || release || raced.Load() != 0 {
			return nil
		}
		key := ShardKey(f.prefix, shard)
		resp, err := env.Admin.Txn(env.Ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, "worker-z", clientv3.WithLease(leaseZ))).Commit()
		if err != nil || !resp.Succeeded {
			raceErr.Store(fmt.Sprintf("test: claim %s for worker-z: succeeded=%v, %v", key, resp != nil && resp.Succeeded, err))
			raced.Store(int64(shard) + 1)
			return nil
		}
		tokZ.Store(resp.Header.Revision)
		raced.Store(int64(shard) + 1)
		return nil
	})
	// worker-a claims the other three; worker-z's shard stays worker-z's.
	var shard int
	env.WaitFor(f.prefix, 5*time.Second, "worker-a to try a claim and own the three other shards", func() bool {
		if raced.Load() == 0 {
			return false
		}
		if e := raceErr.Load(); e != nil {
			t.Fatal(e)
		}
		shard = int(raced.Load() - 1)
		kv, ok := env.Get(ShardKey(f.prefix, shard))
		if !ok || kv.Value != "worker-z" || kv.Lease != leaseZ || kv.CreateRevision != tokZ.Load() {
			t.Fatalf("worker-z claimed shard %d between worker-a's read and its claim, and then worker-a's claim replaced worker-z's key (now %+v, exists=%v): claim with a transaction that succeeds only if the key does not exist (CreateRevision == 0); never overwrite another worker's key", shard, kv, ok)
		}
		if got := a.w.Owned(); slices.Contains(slices.Collect(maps.Keys(got)), shard) {
			t.Fatalf("worker-a's Owned() = %v lists shard %d, which worker-z holds (worker-a's claim lost the race): add a shard only when your claim succeeded", got, shard)
		}
		return f.counts()["worker-a"] == 3 && len(a.w.Owned()) == 3
	})
	if e := raceErr.Load(); e != nil {
		t.Fatal(e)
	}
	env.Revoke(leaseZ)
	f.waitBalanced(5*time.Second, fmt.Sprintf("worker-z's lease ended, so shard %d is free: worker-a sees its key deleted on the watch and claims it", shard), "worker-a")
	f.check()
}

// testStaleRelease: worker-a is about to give a shard back when its lease
// ends and worker-z claims that shard; worker-a's late release must not
// delete worker-z's key.
func testStaleRelease(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 2)
	leaseZ := env.Grant(30)
	var stage atomic.Int32 // 0: waiting for the release, 1: held release sent, 2: checked
	var shardZ, tokZ atomic.Int64
	checked := make(chan string, 1)
	check := func() {
		if !stage.CompareAndSwap(1, 2) {
			return
		}
		s := int(shardZ.Load())
		resp, err := env.Admin.Get(env.Ctx, ShardKey(f.prefix, s))
		switch {
		case err != nil:
			checked <- fmt.Sprintf("test: read %s: %v", ShardKey(f.prefix, s), err)
		case len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != tokZ.Load():
			checked <- fmt.Sprintf("worker-a was about to give shard %d back when its lease ended and another worker claimed the shard; worker-a's release then deleted the new owner's key: guard the delete with your token (If CreateRevision(key) == token) in the same transaction", s)
		default:
			checked <- ""
		}
	}
	a := f.start("worker-a", env.Client(), 5, func(r etcdharness.Request) error {
		if stage.Load() == 1 {
			check() // the release has been answered: this is a later request
			return nil
		}
		shard, release := f.shardWrite(r)
		if shard < 0 || !release || stage.Load() != 0 {
			return nil
		}
		// worker-a paused here; meanwhile its lease ended and worker-z
		// claimed the shard. Until worker-a notices, its Owned() lags
		// behind etcd like any dead worker's: not an overlap.
		f.exclude("worker-a", true)
		key := ShardKey(f.prefix, shard)
		cur, err := env.Admin.Get(env.Ctx, key)
		if err == nil && len(cur.Kvs) > 0 {
			_, err = env.Admin.Revoke(env.Ctx, clientv3.LeaseID(cur.Kvs[0].Lease))
		}
		// (worker-b, which sees worker-a's keys go, may beat worker-z to
		// it: then worker-b is the new owner whose key must survive.)
		resp, err2 := env.Admin.Txn(env.Ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, "worker-z", clientv3.WithLease(leaseZ))).
			Else(clientv3.OpGet(key)).Commit()
		var tok int64
		switch {
		case err != nil || err2 != nil:
		case resp.Succeeded:
			tok = resp.Header.Revision
		case len(resp.Responses[0].GetResponseRange().Kvs) > 0:
			tok = resp.Responses[0].GetResponseRange().Kvs[0].CreateRevision
		}
		if tok == 0 {
			checked <- fmt.Sprintf("test: end worker-a's lease and claim %s for worker-z: %v, %v", key, err, err2)
			stage.Store(2)
			return nil
		}
		shardZ.Store(int64(shard))
		tokZ.Store(tok)
		stage.Store(1)
		return nil
	})
	f.waitBalanced(5*time.Second, "a worker alone takes every shard", "worker-a")
	f.start("worker-b", env.Client(), 5)
	select {
	case msg := <-checked:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-time.After(5 * time.Second):
		if stage.Load() == 0 {
			t.Fatalf("worker-b joined, but worker-a never gave a shard back within 5 s (2 shards, 2 workers: 1 each)")
		}
		check()
		if msg := <-checked; msg != "" {
			t.Fatal(msg)
		}
	}
	_ = a
	env.Revoke(leaseZ)
	f.waitBalanced(5*time.Second, "worker-a lost its lease while giving a shard back and must join again with a new one; after worker-z's lease ended, 1 shard each", "worker-a", "worker-b")
	f.check()
}

// testShardTakenAway: worker-a shares 4 shards with worker-z, a member
// whose key the test wrote and that claims nothing. worker-a must claim
// exactly its target, 2. Then an operator hands one of worker-a's shards
// to worker-z behind its back: it rewrites the key with worker-z's name and
// lease (its CreateRevision, worker-a's token, stays). At its next read
// worker-a must drop the shard from Owned() (Owned() follows every read,
// not only the worker's own claims and releases) and claim a free one.
func testShardTakenAway(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 4)
	leaseZ := env.Grant(30)
	if _, err := env.Admin.Put(env.Ctx, MemberKey(f.prefix, "worker-z"), "", clientv3.WithLease(leaseZ)); err != nil {
		t.Fatalf("test: put worker-z's member key: %v", err)
	}
	var claims atomic.Int64 // shard keys worker-a asked to create, in all
	a := f.start("worker-a", env.Client(), 5, func(r etcdharness.Request) error {
		claims.Add(int64(len(f.claims(r))))
		return nil
	})
	mine := func() map[int]int64 {
		m := map[int]int64{}
		for _, kv := range env.List(f.prefix + "/shards/") {
			if kv.Value == "worker-a" {
				i, _ := strconv.Atoi(strings.TrimPrefix(kv.Key, f.prefix+"/shards/"))
				m[i] = kv.CreateRevision
			}
		}
		return m
	}
	env.WaitFor(f.prefix, 5*time.Second, "worker-a to own 2 of the 4 shards (worker-z is a member too), in etcd and in its Owned()", func() bool {
		m := mine()
		return len(m) == 2 && maps.Equal(a.w.Owned(), m)
	})

	held := mine()
	s := slices.Min(slices.Collect(maps.Keys(held)))
	if _, err := env.Admin.Put(env.Ctx, ShardKey(f.prefix, s), "worker-z", clientv3.WithLease(leaseZ)); err != nil {
		t.Fatalf("test: hand shard %d to worker-z: %v", s, err)
	}
	var got, etcd map[int]int64
	var ok bool
	deadline := time.Now().Add(5 * time.Second)
	env.WaitFor(f.prefix, 6*time.Second, "worker-a to drop the shard taken from it", func() bool {
		etcd, got = mine(), a.w.Owned()
		ok = len(etcd) == 2 && maps.Equal(got, etcd)
		return ok || time.Now().After(deadline)
	})
	if _, listed := got[s]; listed {
		t.Fatalf("an operator handed shard %d from worker-a to worker-z (rewrote its key with worker-z's name and lease; the key's CreateRevision, worker-a's token %d, stayed), and 5 s later worker-a's Owned() = %v still lists it: set Owned() from every read (the keys on your lease), not only from your own claims and releases", s, held[s], got)
	}
	if !ok {
		t.Fatalf("worker-a lost shard %d to worker-z and should own 2 of 4 again (claiming a free one); after 5 s its Owned() = %v and etcd says it owns %v", s, got, etcd)
	}
	f.stop("worker-a")
	// 2 at the start, 1 after losing one.
	if n := claims.Load(); n > 3 {
		t.Errorf("worker-a asked to create %d shard keys in all, where 3 were enough (its target was 2 of 4; it claimed 2, then 1 more after a shard was taken from it): it claimed more than its target and then had to give shards back. Claim only while you own fewer than your target, and count each claim that succeeded", n)
	}
	f.check()
}

// testChangeBeforeWatch: a shard comes free after worker-a's read and
// before its watch is set up. A watch started at the read's revision + 1
// delivers that delete; one started at "now" never does, and worker-a
// never claims the shard.
func testChangeBeforeWatch(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 3)
	other := env.Grant(30)
	ownShard(t, env, f.prefix, 0, "worker-z", other)
	var once sync.Once
	var freedAt atomic.Int64
	a := f.start("worker-a", env.Client(), 5, func(r etcdharness.Request) error {
		if r.Kind != etcdharness.KindWatch {
			return nil
		}
		once.Do(func() {
			// worker-z's lease ends just before worker-a's first watch
			// reaches etcd: shard 0's key is deleted.
			resp, err := env.Admin.Revoke(env.Ctx, other)
			if err != nil {
				t.Errorf("test: revoke worker-z's lease: %v", err)
				return
			}
			freedAt.Store(resp.Header.Revision)
		})
		return nil
	})
	env.WaitFor(f.prefix, 5*time.Second, "worker-a to start watching", func() bool { return freedAt.Load() != 0 })
	ok, why := f.settle(5*time.Second, "worker-a")
	if !ok {
		t.Fatalf("shard 0 came free (worker-z's lease ended, at revision %d) after worker-a's read and just before its first watch was set up, and 5 s later worker-a still does not own all 3 shards (%s). %s", freedAt.Load(), why, watchHint(a))
	}
	f.check()
}

// watchHint says where a worker's newest watch started, against the read
// before it.
func watchHint(r *running) string {
	watched := r.spy.Watched()
	if len(watched) == 0 {
		return fmt.Sprintf("%s opened no watch: watch everything under the prefix from the read's revision + 1 and rebalance after every response", r.name)
	}
	w := watched[len(watched)-1]
	switch {
	case w.Rev == 0:
		return fmt.Sprintf("%s's watch on %s started at \"now\" (no clientv3.WithRev) after a read at revision %d: whatever changed between that read and the watch is never delivered. Start the watch at the read's revision + 1", r.name, w.Key, w.LastRead)
	case w.LastRead != 0 && w.Rev != w.LastRead+1:
		return fmt.Sprintf("%s's watch on %s started at revision %d, but the read before it was at revision %d: start at the read's revision + 1, so nothing in between is missed", r.name, w.Key, w.Rev, w.LastRead)
	}
	return fmt.Sprintf("%s's watch started at revision %d, just after its read (%d): rebalance (read again) after every watch response", r.name, w.Rev, w.LastRead)
}

// testRankByName: the ranks come from the member names in byte order, not
// from the order the workers joined. worker-z joined first and claims
// nothing; with 3 shards, worker-a (first by name) owns 2.
func testRankByName(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 3)
	if _, err := env.Admin.Put(env.Ctx, MemberKey(f.prefix, "worker-z"), "", clientv3.WithLease(env.Grant(30))); err != nil {
		t.Fatalf("test: put worker-z's member key: %v", err)
	}
	a := f.start("worker-a", env.Client(), 5)
	env.WaitFor(f.prefix, 5*time.Second, "worker-a to own 2 of the 3 shards, in etcd and in its Owned(). The members are worker-a and worker-z (worker-z joined first and claims nothing): sorted by name in byte order, worker-a has rank 0, so its target is 3/2 + 1 = 2. Rank by name, not by the order the members joined", func() bool {
		return len(a.w.Owned()) == 2 && f.counts()["worker-a"] == 2
	})
	f.stop("worker-a")
	f.check()
}

// testDeathAndReturn: worker-b's network freezes, its lease is revoked
// and its keep-alives end: the survivors take over, worker-b forgets its
// shards at once, its late commit is refused; when its network comes
// back it joins again.
func testDeathAndReturn(t *testing.T) {
	const ttl = 2
	env := etcdharness.New(t)
	f := newFleet(t, env, 10)
	cliB, proxyB := env.ProxiedClient()
	f.start("worker-a", env.Client(), ttl)
	b := f.start("worker-b", cliB, ttl)
	f.start("worker-c", env.Client(), ttl)
	f.waitBalanced(5*time.Second, "ten shards over three workers: 4, 3, 3", "worker-a", "worker-b", "worker-c")

	stale := b.w.Owned()
	member, ok := env.Get(MemberKey(f.prefix, "worker-b"))
	if !ok {
		t.Fatalf("worker-b has no member key %s", MemberKey(f.prefix, "worker-b"))
	}
	f.exclude("worker-b", true)
	proxyB.Freeze()
	env.Revoke(member.Lease)
	lost, _ := b.spy.LoseKeepAlives()

	f.waitBalanced((ttl+2)*time.Second, "worker-b's lease ended: its member key and shard keys are gone, and the survivors' targets rise to 5", "worker-a", "worker-c")
	t.Logf("worker-b's %d shards taken over in %v", len(stale), time.Since(lost).Round(time.Millisecond))
	deadline := time.Now().Add(time.Second)
	for len(b.w.Owned()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("worker-b's session ended (its keep-alives stopped; its network is frozen) and 1 s later its Owned() still lists %v: clear what you own the moment the session's Done() closes, without waiting for an answer from etcd, which worker-b cannot reach", b.w.Owned())
		}
		time.Sleep(5 * time.Millisecond)
	}

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
	if got := offset(env, f.prefix, shard); got != "500" {
		t.Errorf("shard %d's offset is %q, want the new owner's \"500\"", shard, got)
	}

	// worker-b's network comes back: it joins again, with a new lease.
	proxyB.Thaw()
	f.exclude("worker-b", false)
	f.waitBalanced(5*time.Second, "worker-b's network came back: its Run must start a new session, join again and take its share (4, 3, 3)", "worker-a", "worker-b", "worker-c")
	f.check()
}

// testSameNameOtherLease: shard keys with the worker's name but another
// lease (an earlier process of the same name whose lease has not ended)
// are not the worker's.
func testSameNameOtherLease(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 6)
	old := env.Grant(30)
	oldTok := map[int]int64{}
	for s := range 2 {
		oldTok[s] = ownShard(t, env, f.prefix, s, "worker-a", old)
	}
	a := f.start("worker-a", env.Client(), 5)
	env.WaitFor(f.prefix, 5*time.Second, "worker-a to own shards 2 to 5 on its own lease", func() bool {
		for s, tok := range oldTok {
			kv, ok := env.Get(ShardKey(f.prefix, s))
			if !ok || kv.CreateRevision != tok {
				t.Fatalf("shard %d's key, which an earlier worker-a holds on another lease, was deleted or replaced by the new worker-a: a shard is yours only if its key is on your lease; never release or overwrite anyone else's", s)
			}
		}
		got := a.w.Owned()
		for s := range oldTok {
			if _, ok := got[s]; ok {
				t.Fatalf("worker-a's Owned() = %v lists shard %d, whose key has worker-a's name but belongs to another lease (an earlier worker-a that has not expired yet): a shard is yours only if its key is attached to your lease", got, s)
			}
		}
		return len(got) == 4
	})
	env.Revoke(old)
	f.waitBalanced(5*time.Second, "the earlier worker-a's lease ended: shards 0 and 1 are free for the new one", "worker-a")
	f.check()
}

// testMemberKeyDeleted: an operator deletes worker-b's member key while
// its lease lives on. worker-b is then not counted by the others; it must
// notice and join again.
func testMemberKeyDeleted(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 4)
	f.start("worker-a", env.Client(), 5)
	f.start("worker-b", env.Client(), 5)
	f.waitBalanced(5*time.Second, "four shards over two workers: 2, 2", "worker-a", "worker-b")
	if _, err := env.Admin.Delete(env.Ctx, MemberKey(f.prefix, "worker-b")); err != nil {
		t.Fatalf("test: delete worker-b's member key: %v", err)
	}
	env.WaitFor(f.prefix, 5*time.Second, "worker-b to put its member key back", func() bool {
		_, ok := env.Get(MemberKey(f.prefix, "worker-b"))
		return ok
	})
	f.waitBalanced(5*time.Second, "worker-b's member key was deleted (its lease lives on) and it must join again: if your own name is not among the members you read, you are not a member; start a new membership", "worker-a", "worker-b")
	f.check()
}

// testSessionFailures: for 200 ms etcd refuses every lease grant, then
// the first keep-alive and one read: Run retries with a pause between
// attempts and ends up owning every shard.
func testSessionFailures(t *testing.T) {
	const window = 200 * time.Millisecond
	env := etcdharness.New(t)
	f := newFleet(t, env, 4)
	var mu sync.Mutex
	var first time.Time
	var grants, failedGets, failedKeepAlives int
	f.start("worker-a", env.Client(), 5, func(r etcdharness.Request) error {
		mu.Lock()
		defer mu.Unlock()
		switch r.Kind {
		case etcdharness.KindGrant:
			if first.IsZero() {
				first = time.Now()
			}
			if time.Since(first) < window {
				grants++
				return errInjected
			}
		case etcdharness.KindKeepAlive:
			if failedKeepAlives == 0 {
				failedKeepAlives++
				return errInjected
			}
		}
		if isRead(r) && r.Kind != etcdharness.KindWatch {
			if !first.IsZero() && time.Since(first) >= window && failedGets == 0 {
				failedGets++
				return errInjected
			}
		}
		return nil
	})
	f.waitBalanced(5*time.Second, "etcd refused lease grants for 200 ms, then a keep-alive and a read: Run must retry (with a new session if needed) until it owns its share", "worker-a")
	mu.Lock()
	defer mu.Unlock()
	if grants > 10 {
		t.Errorf("while etcd refused lease grants for %v, worker-a asked %d times: wait between attempts (100 ms, or a backoff that grows) instead of retrying at once", window, grants)
	}
	f.check()
}

// testReadFailsAfterChange: a shard comes free and the read that follows
// fails. The worker must not forget the change: it rebalances again (after
// a pause, or with a new membership) and claims the shard.
func testReadFailsAfterChange(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 3)
	other := env.Grant(30)
	ownShard(t, env, f.prefix, 0, "worker-z", other)
	var failNext atomic.Bool
	a := f.start("worker-a", env.Client(), 5, func(r etcdharness.Request) error {
		if isRead(r) && r.Kind != etcdharness.KindWatch && failNext.CompareAndSwap(true, false) {
			return errInjected
		}
		return nil
	})
	env.WaitFor(f.prefix, 5*time.Second, "worker-a to own shards 1 and 2 (worker-z holds 0)", func() bool {
		return len(a.w.Owned()) == 2 && f.counts()["worker-a"] == 2
	})
	failNext.Store(true)
	env.Revoke(other)
	f.waitBalanced(5*time.Second, "worker-z's lease ended, freeing shard 0, and worker-a's next read failed: a failed rebalance must be retried (after a pause, or by starting a new membership), not skipped until the next change", "worker-a")
	f.check()
}

// testStopUnreachable: Run must return promptly when its context is
// cancelled even though etcd does not answer.
func testStopUnreachable(t *testing.T) {
	const ttl = 2
	env := etcdharness.New(t)
	f := newFleet(t, env, 4)
	cli, proxy := env.ProxiedClient()
	a := f.start("worker-a", cli, ttl)
	f.waitBalanced(5*time.Second, "a worker alone takes every shard", "worker-a")
	proxy.Freeze()
	defer proxy.Thaw()
	bound := time.Duration(ttl+1) * time.Second
	if !f.stopWithin("worker-a", bound) {
		t.Fatalf("Run did not return within %v of its context being cancelled while etcd was unreachable: bound every call on the way out (the revoke too) with a timeout of its own", bound)
	}
	if got := a.w.Owned(); len(got) != 0 {
		t.Errorf("Run returned but Owned() still lists %v", got)
	}
}

// testRevokeFails: the revoke on the way out fails; Run returns anyway.
func testRevokeFails(t *testing.T) {
	env := etcdharness.New(t)
	f := newFleet(t, env, 4)
	var revokes atomic.Int64
	a := f.start("worker-a", env.Client(), 5, func(r etcdharness.Request) error {
		if r.Kind == etcdharness.KindRevoke {
			revokes.Add(1)
			return errInjected
		}
		return nil
	})
	f.waitBalanced(5*time.Second, "a worker alone takes every shard", "worker-a")
	if !f.stopWithin("worker-a", 2*time.Second) {
		t.Fatalf("Run did not return within 2 s of its context being cancelled, while etcd refused its revoke (%d attempts): try once (the lease then runs out on its own), do not retry until it succeeds", revokes.Load())
	}
	if revokes.Load() == 0 {
		t.Errorf("Run returned without revoking its lease: the other workers would wait a whole TTL for its shards")
	}
	// The revoke failed, so the lease must run out by itself: nothing may
	// renew it once Run has returned.
	deadline := time.Now().Add(time.Second)
	for a.spy.KeepAlivesOpen() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Run returned after its revoke failed, but 1 s later its lease is still being kept alive: it never runs out, and the other workers never get its shards. Stop the keep-alives on the way out (Session.Orphan or Close, or cancel the context given to KeepAlive), whether or not the revoke works")
		}
		time.Sleep(5 * time.Millisecond)
	}
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

func offset(env *etcdharness.Env, prefix string, shard int) string {
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
	problem  string // the first wrong moment seen (overlap, early listing)
}

type running struct {
	name     string
	w        *Worker
	spy      *etcdharness.Spy
	extra    atomic.Pointer[func(etcdharness.Request) error]
	cancel   context.CancelFunc
	done     chan error
	stopping atomic.Bool
	early    atomic.Value // error: Run returned before it was stopped
	releases atomic.Int64 // release requests sent

	claimMu sync.Mutex
	claimed []claimSent // claims sent since the worker's last read
}

// hook sets (or, with nil, clears) a test's own interceptor for the
// worker's requests.
func (r *running) hook(f func(etcdharness.Request) error) {
	if f == nil {
		r.extra.Store(nil)
		return
	}
	r.extra.Store(&f)
}

func newFleet(t *testing.T, env *etcdharness.Env, m int) *fleet {
	return &fleet{t: t, env: env, prefix: env.Key("stream"), m: m,
		workers: map[string]*running{}, excluded: map[string]bool{}}
}

// start runs a worker on cli (through a spy) with an optional interceptor
// of its requests.
func (f *fleet) start(name string, cli *clientv3.Client, ttl int, hook ...func(etcdharness.Request) error) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{name: name, w: &Worker{Client: cli, Prefix: f.prefix, Name: name, Shards: f.m, TTL: ttl},
		spy: etcdharness.Attach(cli), cancel: cancel, done: make(chan error, 1)}
	if len(hook) > 0 {
		r.hook(hook[0])
	}
	r.spy.Intercept(func(req etcdharness.Request) error {
		if h := r.extra.Load(); h != nil {
			if err := (*h)(req); err != nil {
				return err
			}
		}
		f.checkRequest(r, req)
		return nil
	})
	f.workers[name] = r
	go func() {
		err := r.w.Run(ctx)
		if !r.stopping.Load() {
			r.early.Store(fmt.Errorf("Run of %s returned %v before its context was cancelled; it should keep its share (retrying after errors) until then", name, err))
		}
		r.done <- err
	}()
	f.t.Cleanup(func() { f.stop(name) })
	return r
}

// stopWithin cancels a worker's context and reports whether Run returned
// within d.
func (f *fleet) stopWithin(name string, d time.Duration) bool {
	r := f.workers[name]
	r.stopping.Store(true)
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err // for a later stop
		return true
	case <-time.After(d):
		return false
	}
}

func (f *fleet) stop(name string) {
	r := f.workers[name]
	r.stopping.Store(true)
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil && r.early.Load() == nil {
			f.t.Errorf("Run of %s returned %v once its context was cancelled, want nil: Run gives up its shards and returns nil when its context ends (the context's error is not a failure of Run)", name, err)
		}
		r.done <- err // for a later stop
	case <-time.After(5 * time.Second):
		f.t.Errorf("Run of %s did not return within 5 s of its context being cancelled", name)
	}
}

// exclude stops (or resumes) checking a worker's Owned() for overlaps (it
// is dead; its view may lag until it notices).
func (f *fleet) exclude(name string, out bool) {
	f.mu.Lock()
	f.excluded[name] = out
	f.mu.Unlock()
}

// shardOp is one shard key a request writes: a claim (put) or a release
// (delete).
type shardOp struct {
	shard   int
	release bool
}

// shardOps lists the shard keys a request puts or deletes when its
// comparisons hold, wherever they sit in it: a plain Put or Delete, the
// operations of a transaction, or of transactions nested in it (one
// transaction may release some shards and claim others).
func (f *fleet) shardOps(r etcdharness.Request) []shardOp {
	var out []shardOp
	for _, a := range r.Written() {
		num, ok := strings.CutPrefix(a.Key, f.prefix+"/shards/")
		if !ok || a.End != "" {
			continue
		}
		if i, err := strconv.Atoi(num); err == nil {
			out = append(out, shardOp{shard: i, release: a.Op == etcdharness.OpDelete})
		}
	}
	return out
}

// shardWrite tells which shard a request claims or releases first: shard
// is -1 if it writes no shard key; release is true for a delete. A
// request that releases a shard is reported as that release.
func (f *fleet) shardWrite(r etcdharness.Request) (shard int, release bool) {
	ops := f.shardOps(r)
	for _, op := range ops {
		if op.release {
			return op.shard, true
		}
	}
	if len(ops) > 0 {
		return ops[0].shard, false
	}
	return -1, false
}

// claims lists the shards whose keys a request writes with a put: the
// shards it claims (a transaction may claim several).
func (f *fleet) claims(r etcdharness.Request) []int {
	var out []int
	for _, op := range f.shardOps(r) {
		if !op.release {
			out = append(out, op.shard)
		}
	}
	return out
}

// claimSent is a claim a worker sent: the shard, and etcd's revision just
// before (a key created after it with the worker's name is that claim's).
type claimSent struct {
	shard int
	rev   int64
}

// checkClaimsListed is called when a worker reads or starts a watch: each
// shard it claimed since its previous read, whose claim succeeded and whose
// key is still there on the worker's newest lease, must be in its Owned()
// by now, with the key's token. (Not while it stops: it may have cleared
// Owned() before revoking, and requests still on their way go out then.)
func (f *fleet) checkClaimsListed(r *running) {
	r.claimMu.Lock()
	sent := r.claimed
	r.claimed = nil
	r.claimMu.Unlock()
	granted := r.spy.Granted()
	if len(sent) == 0 || len(granted) == 0 || r.stopping.Load() {
		return
	}
	lease := granted[len(granted)-1]
	resp, err := f.env.Admin.Get(f.env.Ctx, f.prefix+"/shards/", clientv3.WithPrefix())
	if err != nil {
		return // cannot tell
	}
	owned, ok := ownedNow(r.w)
	if !ok || r.stopping.Load() { // stopping is set before Run's ctx is cancelled
		return
	}
	for _, c := range sent {
		for _, kv := range resp.Kvs {
			if string(kv.Key) != ShardKey(f.prefix, c.shard) || string(kv.Value) != r.name || kv.CreateRevision <= c.rev ||
				clientv3.LeaseID(kv.Lease) != lease {
				continue
			}
			if tok, listed := owned[c.shard]; !listed || tok != kv.CreateRevision {
				f.report(fmt.Sprintf("%s's claim of shard %d succeeded (token %d), but when it next read etcd its Owned() = %v: list a shard, with its token, as soon as its claim succeeds, not only once a later read shows it", r.name, c.shard, kv.CreateRevision, owned))
			}
		}
	}
}

// isRead reports whether a request is a worker's read of the picture (a
// Get, Do or transaction that reads and writes nothing) or a watch.
func isRead(r etcdharness.Request) bool {
	return r.Kind == etcdharness.KindWatch || r.Reads() && !r.Writes()
}

// checkRequest looks at a worker's Owned() at the moment it sends a claim,
// a release, its revoke or a read (which must come after every claim it
// has made so far was listed).
func (f *fleet) checkRequest(r *running, req etcdharness.Request) {
	if isRead(req) {
		f.checkClaimsListed(r)
	}
	if shards := f.claims(req); len(shards) > 0 {
		if resp, err := f.env.Admin.Get(f.env.Ctx, ShardKey(f.prefix, shards[0])); err == nil {
			r.claimMu.Lock()
			for _, s := range shards {
				r.claimed = append(r.claimed, claimSent{shard: s, rev: resp.Header.Revision})
			}
			r.claimMu.Unlock()
		}
	}
	ops := f.shardOps(req)
	for _, op := range ops {
		if op.release {
			r.releases.Add(1)
		}
	}
	if len(ops) == 0 && req.Kind != etcdharness.KindRevoke {
		return
	}
	owned, ok := ownedNow(r.w)
	if !ok {
		return // Owned() is blocked while the request is out: cannot tell
	}
	if req.Kind == etcdharness.KindRevoke && len(owned) > 0 && r.stopping.Load() {
		f.report(fmt.Sprintf("%s revoked its lease while its Owned() still listed %v: the next owners may start on those shards while %s still works on them. Clear what you own first, then revoke", r.name, owned, r.name))
	}
	for _, op := range ops {
		if _, listed := owned[op.shard]; !listed {
			continue
		}
		if op.release {
			f.report(fmt.Sprintf("%s still listed shard %d in Owned() when it sent the request releasing it: another worker can claim it at once and both would report it. Forget a shard first, then delete its key", r.name, op.shard))
		} else {
			f.report(fmt.Sprintf("%s already listed shard %d in Owned() when it sent its claim: add a shard only after the claim succeeded", r.name, op.shard))
		}
	}
}

// ownedNow calls w.Owned(), giving up after 50 ms (a solution that holds
// its mutex across requests blocks it while the request is held here).
func ownedNow(w *Worker) (map[int]int64, bool) {
	ch := make(chan map[int]int64, 1)
	go func() { ch <- w.Owned() }()
	select {
	case m := <-ch:
		return m, true
	case <-time.After(50 * time.Millisecond):
		return nil, false
	}
}

func (f *fleet) report(problem string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.problem == "" {
		f.problem = problem
	}
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

// waitBalanced waits up to d for names to share the shards; on failure the
// message says what state was reached and what the test had just done
// (situation).
func (f *fleet) waitBalanced(d time.Duration, situation string, names ...string) {
	f.t.Helper()
	if ok, why := f.settle(d, names...); !ok {
		counts := f.counts()
		hint := ""
		for _, n := range names {
			if w := f.workers[n].spy.Watched(); len(w) > 0 && w[len(w)-1].Rev != w[len(w)-1].LastRead+1 {
				hint += " " + watchHint(f.workers[n]) + "."
			}
		}
		f.t.Fatalf("workers %v not balanced after %v: %s (shards per owner in etcd: %v). Situation: %s.%s", names, d, why, counts, situation, hint)
	}
}

// settle waits up to d for names to share the shards and reports whether
// they did, or why not. A worker whose Run returned early fails the test.
func (f *fleet) settle(d time.Duration, names ...string) (ok bool, why string) {
	f.t.Helper()
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
	return ok, why
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
			if other, ok := seen[s]; ok && f.problem == "" {
				f.problem = fmt.Sprintf("%s and %s both reported owning shard %d at the same moment", other, name, s)
				if kv, ok := f.env.Get(ShardKey(f.prefix, s)); ok && kv.ModRevision != kv.CreateRevision {
					f.problem += fmt.Sprintf(", and the shard's key has been written over since it was created (CreateRevision %d, ModRevision %d, now %s's): a claim replaced another worker's key. Claim with a transaction that succeeds only if the key does not exist (CreateRevision == 0)", kv.CreateRevision, kv.ModRevision, kv.Value)
				} else {
					f.problem += ": forget a shard before you release it, and add it only after your claim succeeded"
				}
			}
			seen[s] = name
		}
	}
}

// check fails the test if anything went wrong along the way.
func (f *fleet) check() {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.problem != "" {
		f.t.Error(f.problem)
	}
}
