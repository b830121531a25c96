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

// Lesson 10-failure-modes-and-security, pages "No leader after an outage"
// and "Starting over after an outage" (and lessons 02 and 04 where they
// name it), says what a quorum loss
// leaves behind: the client's Session is over (its keep-alive channel
// closed once the client's own deadline passed), but nothing was revoked
// while the majority was gone, and when it returns the new raft leader
// gives every lease it still knows a full TTL again (lessor.Promote ->
// refresh), expired ones included. So the old lease can be renewed, its
// key is still there, and only a Revoke (or another TTL plus an election
// timeout) removes it; Close on the ended session revokes it.
func TestQuorumReturnRevivesExpiredLease(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := embedetcd.StartCluster(ctx, 3, embedetcd.WithLogger(zap.NewNop()),
		embedetcd.WithCloseWait(100*time.Millisecond))
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer cl.Close()
	const where = "update content/lessons/10-failure-modes-and-security/lesson.md, \"No leader after an outage\" " +
		"and \"Starting over after an outage\", quiz l10-revived-lease, " +
		"and the lessons that point to it (02, 04)"
	lead, err := cl.Leader()
	if err != nil {
		t.Fatalf("leader: %v", err)
	}
	all := cl.Members()
	cli, err := cl.ClientFor(all[lead].Endpoint())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer cli.Close()
	const ttl = 3
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(ttl))
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer sess.Orphan()
	id := sess.Lease()
	if _, err := cli.Put(ctx, "facts/revived", "x", clientv3.WithLease(id)); err != nil {
		t.Fatalf("put: %v", err)
	}
	// Quorum goes: stop both followers.
	followers := []*embedetcd.Member{all[(lead+1)%3], all[(lead+2)%3]}
	for _, m := range followers {
		if err := m.Stop(); err != nil {
			t.Fatalf("stop %s: %v", m.Name, err)
		}
	}
	lost := time.Now()
	select {
	case <-sess.Done():
	case <-time.After(3 * ttl * time.Second):
		t.Fatalf("the session was still open %d s after quorum was lost: %s", 3*ttl, where)
	}
	over := time.Since(lost)
	// The client's deadline is its last keep-alive reply plus the TTL, and
	// it renews every TTL/3 (checked every 500 ms), so the last reply came
	// at most TTL/3 + 500 ms before the loss.
	if earliest := time.Duration(ttl)*time.Second*2/3 - 500*time.Millisecond; over < earliest {
		t.Errorf("the session ended %v after quorum was lost, before its %d s TTL could have run out (earliest %v)",
			over.Round(10*time.Millisecond), ttl, earliest)
	}
	// Let the lease's TTL run out by the wall clock while quorum is gone,
	// whenever the client gave up on it.
	time.Sleep(time.Until(lost.Add(time.Duration(ttl)*time.Second + 500*time.Millisecond)))
	// Quorum returns: one follower back makes two of three.
	if err := followers[0].Restart(ctx); err != nil {
		t.Fatalf("restart %s: %v", followers[0].Name, err)
	}
	back := time.Now()
	if gone := back.Sub(lost); gone < time.Duration(ttl)*time.Second {
		t.Fatalf("quorum was back after %v, within the %d s TTL: the test proves nothing", gone, ttl)
	}
	ka, err := keepAliveOnce(ctx, cli, id)
	if err != nil {
		t.Fatalf("renewing the session's old lease after quorum returned (%v after it was lost, "+
			"past its %d s TTL) failed: %v; the lesson says the lease is refreshed, not revoked: %s",
			back.Sub(lost).Round(100*time.Millisecond), ttl, err, where)
	}
	if ka.TTL != ttl {
		t.Errorf("the revived lease was renewed to TTL %d, want the full %d: %s", ka.TTL, ttl, where)
	}
	r, err := cli.Get(ctx, "facts/revived")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(r.Kvs) != 1 {
		t.Errorf("the key of the expired lease was gone once quorum returned; the lesson says it is kept: %s", where)
	}
	// The lesson's correction: Close the ended session, which revokes its
	// lease even though Done() has closed.
	if err := sess.Close(); err != nil {
		t.Errorf("closing the ended session (to revoke its lease) failed: %v: %s", err, where)
	}
	if r, err := cli.Get(ctx, "facts/revived"); err != nil || len(r.Kvs) != 0 {
		t.Errorf("after the ended session's Close the key is still there (%v): %s", err, where)
	}
	t.Logf("session over %v after quorum loss; quorum back after %v; old lease renewed to TTL %d",
		over.Round(10*time.Millisecond), back.Sub(lost).Round(10*time.Millisecond), ka.TTL)
}

// keepAliveOnce renews id, retrying while the cluster elects a leader.
func keepAliveOnce(ctx context.Context, cli *clientv3.Client, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	var err error
	for range 20 {
		c, cancel := context.WithTimeout(ctx, time.Second)
		var ka *clientv3.LeaseKeepAliveResponse
		ka, err = cli.KeepAliveOnce(c, id)
		cancel()
		if err == nil {
			return ka, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// Lessons 05-fencing-tokens ("In etcd, the token is the CreateRevision")
// and 07-etcd-election-recipe say lease ids increase on one member but are
// not ordered across members: each member makes ids from its own
// generator (its member id in the high bits, a counter below).
func TestLeaseIDsIncreasePerMember(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := embedetcd.StartCluster(ctx, 3, embedetcd.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer cl.Close()
	const where = "update content/lessons/05-fencing-tokens/lesson.md and 07-etcd-election-recipe/lesson.md, " +
		"where they say lease ids are ordered on one member only"
	ms := cl.Members()
	a, err := cl.ClientFor(ms[0].Endpoint())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer a.Close()
	b, err := cl.ClientFor(ms[1].Endpoint())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer b.Close()
	grant := func(c *clientv3.Client) int64 {
		g, err := c.Grant(ctx, 5)
		if err != nil {
			t.Fatalf("grant: %v", err)
		}
		return int64(g.ID)
	}
	// In time order: a, b, a, a, b.
	a1, b1, a2, a3, b2 := grant(a), grant(b), grant(a), grant(a), grant(b)
	if !(a1 < a2 && a2 < a3) {
		t.Errorf("three leases granted one after another on member %s have ids %x, %x, %x: not increasing: %s",
			ms[0].Name, a1, a2, a3, where)
	}
	if !(b1 < b2) {
		t.Errorf("two leases granted one after another on member %s have ids %x, %x: not increasing: %s",
			ms[1].Name, b1, b2, where)
	}
	if a1>>48 == b1>>48 {
		t.Fatalf("members %s and %s share an id prefix (%x): the test cannot tell members apart", ms[0].Name, ms[1].Name, a1>>48)
	}
	// One member's ids are all above or all below the other's, whatever
	// the order they were granted in: a1 < b1 < a2 cannot hold.
	if (a1 < b1) == (b1 < a2) {
		t.Errorf("ids granted a, b, a on two members came out in time order (%x, %x, %x); "+
			"the lessons say they are ordered per member only: %s", a1, b1, a2, where)
	}
	t.Logf("member %s: %x %x %x; member %s: %x %x", ms[0].Name, a1, a2, a3, ms[1].Name, b1, b2)
}
