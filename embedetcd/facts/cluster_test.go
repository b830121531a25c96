package facts

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
)

// Lesson 06-tuning-the-ttl, page "When etcd's own leader changes", states
// the measurement on the playground's 3-member cluster (50/500 ms ticks,
// so a 500 ms election timeout): a TTL-4 lease nobody renews reads 1
// before a forced leader move and 4 right after it (4.5 s are left, read
// rounded down), and its key vanishes 4.5 to 5 s after the move instead
// of about 1.5 s after it.
func TestLeaderMoveRestartsLeaseTTL(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := embedetcd.StartCluster(ctx, 3, embedetcd.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	defer cl.Close()
	cli, err := cl.Client()
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	const ttl = 4
	g, err := cli.Grant(ctx, ttl)
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
	put, err := cli.Put(ctx, "facts/leader-move", "x", clientv3.WithLease(g.ID))
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	time.Sleep(2500 * time.Millisecond) // 1.5 s left: reads 1
	before, err := cli.TimeToLive(ctx, g.ID)
	if err != nil {
		t.Fatalf("time to live before the move: %v", err)
	}
	from, err := cl.Leader()
	if err != nil {
		t.Fatalf("leader: %v", err)
	}
	if err := cl.MoveLeader(ctx, (from+1)%3); err != nil {
		t.Fatalf("move leader: %v", err)
	}
	moved := time.Now()
	after, err := cli.TimeToLive(ctx, g.ID)
	if err != nil {
		t.Fatalf("time to live after the move: %v", err)
	}
	gone := waitDelete(t, ctx, cli, "facts/leader-move", put.Header.Revision+1).Sub(moved)
	const where = "update lesson 06 \"When etcd's own leader changes\""
	if before.TTL != 1 {
		t.Errorf("2.5 s after Grant(%d) the lease read %d, want 1 (the test's setup; %s)", ttl, before.TTL, where)
	}
	if after.TTL != ttl {
		t.Errorf("right after the leader move the lease read %d, want %d "+
			"(full TTL plus the 500 ms election timeout, rounded down): %s", after.TTL, ttl, where)
	}
	// Expiry at move + 0.5 s + 4 s, revoked by the next pass of the 500 ms
	// loop; 400 ms of slack for commit, watch and a loaded machine.
	lo, hi := 4400*time.Millisecond, 5400*time.Millisecond
	if gone < lo || gone > hi {
		t.Errorf("the key vanished %v after the leader move, want between %v and %v: %s",
			gone.Round(10*time.Millisecond), lo, hi, where)
	}
	t.Logf("TTL before %d, after %d; key gone %v after the move", before.TTL, after.TTL, gone.Round(10*time.Millisecond))
}
