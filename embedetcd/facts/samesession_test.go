package facts

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/embedetcd"
)

// Lesson 07-etcd-election-recipe, page "A lock belongs to its session"
// (and quiz l07-same-session-lock), says the concurrency package keys a
// Mutex by its session's lease: a second Mutex on the same session and
// prefix finds that key already there, so its Lock returns at once while
// the first still "holds" the lock, and either Unlock frees it for
// everyone, leaving the other Mutex believing it owns the lock.
func TestMutexBelongsToItsSession(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 15*time.Second)
	const pfx = "facts/same-session-lock"
	const where = "update content/lessons/07-etcd-election-recipe/lesson.md, \"A lock belongs to its session\", " +
		"and quiz l07-same-session-lock"
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer s.Close()
	other, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer other.Close()

	first, second := concurrency.NewMutex(s, pfx), concurrency.NewMutex(s, pfx)
	if err := first.Lock(ctx); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	// A second session is refused, so the lock is really held...
	if err := concurrency.NewMutex(other, pfx).TryLock(ctx); !errors.Is(err, concurrency.ErrLocked) {
		t.Fatalf("another session's TryLock returned %v, want ErrLocked (the test's setup)", err)
	}
	// ...yet a second Mutex on the holder's session gets it too. TryLock
	// cannot wait, so a package that queued the second Mutex behind the
	// first would answer ErrLocked here.
	if err := second.TryLock(ctx); err != nil {
		t.Errorf("a second Mutex on the holder's session got %v from TryLock, want nil (it finds its session's key "+
			"and takes it as its own): %s", err, where)
	}
	if first.Key() != second.Key() {
		t.Errorf("the two Mutexes of one session hold keys %q and %q, want one shared key: %s", first.Key(), second.Key(), where)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatalf("second unlock: %v", err)
	}
	// The first Mutex never unlocked, but its fence no longer holds and
	// another session takes the lock.
	r, err := cli.Txn(ctx).If(first.IsOwner()).Then(clientv3.OpPut("facts/same-session-data", "x")).Commit()
	if err != nil {
		t.Fatalf("fenced write: %v", err)
	}
	if r.Succeeded {
		t.Errorf("a write fenced on the first Mutex's IsOwner succeeded after the second Mutex unlocked: %s", where)
	}
	if err := concurrency.NewMutex(other, pfx).TryLock(ctx); err != nil {
		t.Errorf("after the second Mutex's Unlock another session's TryLock returned %v, want nil "+
			"(one Unlock frees the lock for both Mutexes): %s", err, where)
	}
}

// The same page says an Election is the session's too: a second Election
// on the same session and prefix wins at once, replaces the first one's
// value, the first one can still proclaim over it, and either one's
// Resign ends the leadership of both.
func TestElectionBelongsToItsSession(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 15*time.Second)
	const pfx = "facts/same-session-election"
	const where = "update content/lessons/07-etcd-election-recipe/lesson.md, \"A lock belongs to its session\", " +
		"and quiz l07-same-session-election"
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer s.Close()
	first, second := concurrency.NewElection(s, pfx), concurrency.NewElection(s, pfx)
	if err := first.Campaign(ctx, "first"); err != nil {
		t.Fatalf("first campaign: %v", err)
	}
	// Bounded: a package that queued the second Election behind the first
	// would block here until the context ends.
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = second.Campaign(c, "second")
	cancel()
	if err != nil {
		t.Fatalf("a second Election on the leader's session returned %v from Campaign, want nil at once: %s", err, where)
	}
	leader, err := first.Leader(ctx)
	if err != nil {
		t.Fatalf("leader: %v", err)
	}
	if got := string(leader.Kvs[0].Value); got != "second" {
		t.Errorf("after the second Campaign the leader's value is %q, want %q (it overwrote the first): %s", got, "second", where)
	}
	// Neither is told: the first one's Proclaim still passes its guard,
	// since the key and its CreateRevision are the same.
	if err := first.Proclaim(ctx, "first again"); err != nil {
		t.Errorf("the first Election's Proclaim after the second Campaign returned %v, want nil: %s", err, where)
	}
	if first.Key() != second.Key() {
		t.Errorf("the two Elections of one session hold keys %q and %q, want one shared key: %s", first.Key(), second.Key(), where)
	}
	if err := second.Resign(ctx); err != nil {
		t.Fatalf("second resign: %v", err)
	}
	if _, err := first.Leader(ctx); !errors.Is(err, concurrency.ErrElectionNoLeader) {
		t.Errorf("after the second Election resigned, Leader returned %v, want ErrElectionNoLeader "+
			"(the first one's leadership went with it): %s", err, where)
	}
	if err := first.Proclaim(ctx, "still me"); !errors.Is(err, concurrency.ErrElectionNotLeader) {
		t.Errorf("the first Election's Proclaim after the second resigned returned %v, want ErrElectionNotLeader: %s", err, where)
	}
}
