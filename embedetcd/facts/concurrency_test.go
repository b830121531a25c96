package facts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/embedetcd"
)

// content/lessons/07-etcd-election-recipe/lesson.md, page "The etcd recipe
// in one transaction" (and lesson 05 on fencing tokens), says the CreateRevision
// of the lock key is a fencing token: every later owner gets a larger one.
func TestCreateRevisionRisesAcrossOwners(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 10*time.Second)
	var revs []int64
	for i := range 3 {
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		e := concurrency.NewElection(s, "facts/owners/")
		if err := e.Campaign(ctx, fmt.Sprint(i)); err != nil {
			t.Fatalf("campaign %d: %v", i, err)
		}
		// Unrelated writes between owners must not matter.
		if _, err := cli.Put(ctx, "facts/noise", fmt.Sprint(i)); err != nil {
			t.Fatalf("put: %v", err)
		}
		revs = append(revs, e.Rev())
		if err := s.Close(); err != nil { // revokes: the next owner may win
			t.Fatalf("close session %d: %v", i, err)
		}
	}
	for i := 1; i < len(revs); i++ {
		if revs[i] <= revs[i-1] {
			t.Errorf("owners' CreateRevisions %v do not rise: update "+
				"content/lessons/07-etcd-election-recipe/lesson.md, \"The etcd recipe in one transaction\", "+
				"and lesson 05's token", revs)
		}
	}
}

// recordingWatcher remembers every key a client watches.
type recordingWatcher struct {
	clientv3.Watcher
	mu   sync.Mutex
	keys []string
}

func (w *recordingWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	w.mu.Lock()
	w.keys = append(w.keys, key)
	w.mu.Unlock()
	return w.Watcher.Watch(ctx, key, opts...)
}

func (w *recordingWatcher) watched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.keys...)
}

// Lesson 07-etcd-election-recipe, pages "What the losers do while they
// wait" and "etcd's concurrency package", say a Mutex waiter watches only
// the key just ahead of it, so a release wakes one waiter, not the queue.
func TestMutexWaiterWatchesOnlyItsPredecessor(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	ctx := testCtx(t, 15*time.Second)
	const pfx = "facts/mutex/"
	admin := newClient(t, srv.Endpoints()...)

	owner, err := concurrency.NewSession(newClient(t, srv.Endpoints()...), concurrency.WithTTL(5))
	if err != nil {
		t.Fatalf("owner session: %v", err)
	}
	om := concurrency.NewMutex(owner, pfx)
	if err := om.Lock(ctx); err != nil {
		t.Fatalf("owner lock: %v", err)
	}
	const n = 3
	keys := []string{om.Key()}
	watchers := make([]*recordingWatcher, n)
	locked := make([]chan error, n)
	for i := range n {
		cli := newClient(t, srv.Endpoints()...)
		watchers[i] = &recordingWatcher{Watcher: cli.Watcher}
		cli.Watcher = watchers[i]
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatalf("waiter %d session: %v", i, err)
		}
		m := concurrency.NewMutex(s, pfx)
		locked[i] = make(chan error, 1)
		go func() { locked[i] <- m.Lock(ctx) }()
		// Wait until this waiter's key is queued, so the order is known.
		for {
			r, err := admin.Get(ctx, pfx, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
			if err != nil {
				t.Fatalf("list queue: %v", err)
			}
			if len(r.Kvs) == i+2 {
				keys = append(keys, string(r.Kvs[i+1].Key))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	const where = "update content/lessons/07-etcd-election-recipe/lesson.md, \"What the losers do while they wait\" and \"etcd's concurrency package\""
	settle := func() { time.Sleep(300 * time.Millisecond) }
	settle()
	for i, w := range watchers {
		if got := w.watched(); len(got) != 1 || got[0] != keys[i] {
			t.Errorf("waiter %d watched %q, want only its predecessor %q: %s", i+1, got, keys[i], where)
		}
	}
	if err := om.Unlock(ctx); err != nil {
		t.Fatalf("owner unlock: %v", err)
	}
	select {
	case err := <-locked[0]:
		if err != nil {
			t.Fatalf("first waiter's Lock: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("the first waiter never got the lock: %s", where)
	}
	settle()
	for i := 1; i < n; i++ {
		select {
		case err := <-locked[i]:
			t.Errorf("waiter %d returned from Lock (%v) although the one ahead of it holds the lock: %s", i+1, err, where)
		default:
		}
		if got := watchers[i].watched(); len(got) != 1 {
			t.Errorf("waiter %d woke on a release that was not its predecessor's (watches %q): %s", i+1, got, where)
		}
	}
}

// Lesson 07-etcd-election-recipe, page "etcd's concurrency package", says
// Campaign does not re-check its own key after waiting (etcd issue 19597):
// if a waiting candidate's lease is revoked and the leader then resigns,
// Campaign returns nil with the candidate's key gone, while Mutex.Lock in
// the same situation returns ErrSessionExpired.
func TestCampaignReturnsWithItsKeyGone(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 15*time.Second)
	const where = "update content/lessons/07-etcd-election-recipe/lesson.md, \"etcd's concurrency package\" (the 19597 sharp edge)"

	t.Run("Campaign", func(t *testing.T) {
		leader, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatalf("session: %v", err)
		}
		defer leader.Close()
		waiter, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatalf("session: %v", err)
		}
		defer waiter.Close()
		le := concurrency.NewElection(leader, "facts/campaign/")
		if err := le.Campaign(ctx, "leader"); err != nil {
			t.Fatalf("leader campaign: %v", err)
		}
		we := concurrency.NewElection(waiter, "facts/campaign/")
		done := make(chan error, 1)
		go func() { done <- we.Campaign(ctx, "waiter") }()
		waitKeys(t, ctx, cli, "facts/campaign/", 2)
		if _, err := cli.Revoke(ctx, waiter.Lease()); err != nil {
			t.Fatalf("revoke the waiter's lease: %v", err)
		}
		if err := le.Resign(ctx); err != nil {
			t.Fatalf("resign: %v", err)
		}
		err = <-done
		r, gerr := cli.Get(ctx, we.Key())
		if gerr != nil {
			t.Fatalf("get the waiter's key: %v", gerr)
		}
		if err != nil || len(r.Kvs) != 0 {
			t.Errorf("Campaign returned %v with %d key(s) left; the lesson says it returns nil "+
				"with its key gone: %s", err, len(r.Kvs), where)
		}
	})

	t.Run("Mutex", func(t *testing.T) {
		owner, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatalf("session: %v", err)
		}
		defer owner.Close()
		waiter, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatalf("session: %v", err)
		}
		defer waiter.Close()
		om := concurrency.NewMutex(owner, "facts/lock/")
		if err := om.Lock(ctx); err != nil {
			t.Fatalf("owner lock: %v", err)
		}
		wm := concurrency.NewMutex(waiter, "facts/lock/")
		done := make(chan error, 1)
		go func() { done <- wm.Lock(ctx) }()
		waitKeys(t, ctx, cli, "facts/lock/", 2)
		if _, err := cli.Revoke(ctx, waiter.Lease()); err != nil {
			t.Fatalf("revoke the waiter's lease: %v", err)
		}
		if err := om.Unlock(ctx); err != nil {
			t.Fatalf("unlock: %v", err)
		}
		if err := <-done; !errors.Is(err, concurrency.ErrSessionExpired) {
			t.Errorf("Mutex.Lock returned %v, want ErrSessionExpired: %s", err, where)
		}
	})
}

// waitKeys waits until n keys exist under pfx.
func waitKeys(t *testing.T, ctx context.Context, cli *clientv3.Client, pfx string, n int64) {
	t.Helper()
	for {
		r, err := cli.Get(ctx, pfx, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatalf("count %s: %v", pfx, err)
		}
		if r.Count == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// content/lessons/07-etcd-election-recipe/lesson.md, page "etcd's
// concurrency package", says TryLock fails at once with ErrLocked while
// another session holds the lock, and a second Unlock returns
// ErrLockReleased.
func TestTryLockAndDoubleUnlock(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 10*time.Second)
	const where = "update content/lessons/07-etcd-election-recipe/lesson.md, \"etcd's concurrency package\""
	a, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer a.Close()
	b, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer b.Close()
	am := concurrency.NewMutex(a, "facts/trylock/")
	if err := am.Lock(ctx); err != nil {
		t.Fatalf("lock: %v", err)
	}
	if err := concurrency.NewMutex(b, "facts/trylock/").TryLock(ctx); !errors.Is(err, concurrency.ErrLocked) {
		t.Errorf("TryLock on a held lock returned %v, want ErrLocked: %s", err, where)
	}
	if err := am.Unlock(ctx); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	if err := am.Unlock(ctx); !errors.Is(err, concurrency.ErrLockReleased) {
		t.Errorf("a second Unlock returned %v, want ErrLockReleased: %s", err, where)
	}
}

// Lesson 10-failure-modes-and-security, page "No leader after an outage",
// and its quiz (l10-compacted-watch) say a watch started from a revision
// that has been compacted ends with a compaction error and closes, so a
// client must re-read and watch from a fresh revision.
func TestWatchFromCompactedRevisionEnds(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 10*time.Second)
	const where = "update content/lessons/10-failure-modes-and-security/lesson.md, " +
		"\"No leader after an outage\", and quiz l10-compacted-watch"
	first, err := cli.Put(ctx, "facts/compact", "1")
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	last, err := cli.Put(ctx, "facts/compact", "2")
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if _, err := cli.Compact(ctx, last.Header.Revision); err != nil {
		t.Fatalf("compact: %v", err)
	}
	n, closed := 0, false
	var werr error
	for wr := range cli.Watch(ctx, "facts/compact", clientv3.WithRev(first.Header.Revision)) {
		n++
		if err := wr.Err(); err != nil {
			werr = err
		}
	}
	closed = ctx.Err() == nil
	if !closed || !errors.Is(werr, rpctypes.ErrCompacted) {
		t.Errorf("a watch from compacted revision %d ended=%v after %d responses with error %v, "+
			"want it to end with ErrCompacted: %s", first.Header.Revision, closed, n, werr, where)
	}
}
