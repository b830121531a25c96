package facts

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
)

// Lesson 06-tuning-the-ttl, page "A leader change, in numbers" (the
// holder can still lose), and lesson 04-renewable-leases, page "Losing the
// lease means stopping now", say a raft leader change only lengthens
// leases on the server, yet can end the holder's session: the client's
// deadline is its last keep-alive reply plus the TTL, so an election that
// lasts longer than what is left of it closes Session.Done() while etcd
// still holds the lease and its key. Here the election cannot finish
// until the test lets it: the two followers cannot hear each other when
// the leader stops, so neither can win.
func TestLongElectionEndsSessionWhileEtcdKeepsLease(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := embedetcd.StartCluster(ctx, 3, embedetcd.WithLogger(zap.NewNop()),
		embedetcd.WithCloseWait(100*time.Millisecond))
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer cl.Close()
	const where = "update content/lessons/06-tuning-the-ttl/lesson.md, \"A leader change, in numbers\", " +
		"lesson 04's \"Losing the lease means stopping now\" and quiz l06-flapping-tail"
	lead, err := cl.Leader()
	if err != nil {
		t.Fatalf("leader: %v", err)
	}
	all := cl.Members()
	f1, f2 := (lead+1)%3, (lead+2)%3
	cli, err := cl.ClientFor(all[f1].Endpoint(), all[f2].Endpoint())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer cli.Close()
	const ttl = 2
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(ttl))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer sess.Orphan()
	if _, err := cli.Put(ctx, "facts/long-election", "x", clientv3.WithLease(sess.Lease())); err != nil {
		t.Fatalf("put: %v", err)
	}
	// The followers lose each other while the leader still reaches both
	// (it stays leader); then the leader stops, and no election can end.
	if err := cl.CutLink(f1, f2); err != nil {
		t.Fatalf("cut link: %v", err)
	}
	if err := all[lead].Stop(); err != nil {
		t.Fatalf("stop %s: %v", all[lead].Name, err)
	}
	select {
	case <-sess.Done():
	case <-time.After(4 * ttl * time.Second):
		t.Fatalf("the session was still open %d s into an election that cannot end: %s", 4*ttl, where)
	}
	// The election ends: the followers hear each other again.
	if err := cl.MendLink(f1, f2); err != nil {
		t.Fatalf("mend link: %v", err)
	}
	left := timeToLive(ctx, t, cli, sess.Lease())
	if left < 1 {
		t.Errorf("after the election the ended session's lease read TTL %d: etcd no longer held it, "+
			"but the lessons say a leader change only lengthens leases: %s", left, where)
	}
	r, err := cli.Get(ctx, "facts/long-election")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(r.Kvs) != 1 {
		t.Errorf("the ended session's key was gone after the election: %s", where)
	}
	t.Logf("session ended during the election; afterwards etcd held its lease (TTL %d) and key", left)
}

// timeToLive reads the lease's remaining TTL, retrying while the cluster
// elects a leader.
func timeToLive(ctx context.Context, t *testing.T, cli *clientv3.Client, id clientv3.LeaseID) int64 {
	t.Helper()
	var err error
	for range 20 {
		c, cancel := context.WithTimeout(ctx, time.Second)
		var r *clientv3.LeaseTimeToLiveResponse
		r, err = cli.TimeToLive(c, id)
		cancel()
		if err == nil {
			return r.TTL
		}
		if ctx.Err() != nil {
			break
		}
	}
	t.Fatalf("time to live: %v", err)
	return 0
}
