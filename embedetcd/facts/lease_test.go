package facts

import (
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
)

// Lesson 06-tuning-the-ttl, page "etcd's floor: minimum TTL and whole
// seconds" (and lesson 02's page on etcd leases) state: Grant(1) gets TTL
// 2 with etcd's default ticks (100/1000 ms) and TTL 1 with the
// playground's fast ticks (10/100 ms), cluster ticks (50/500 ms) and the
// 100/500 ms ticks the TUI and `playground etcd` run with.
func TestMinimumTTL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		ticks embedetcd.Ticks
		want  int64
	}{
		{"default ticks", embedetcd.DefaultTicks, 2},
		{"fast ticks", embedetcd.FastTicks, 1},
		{"cluster ticks", embedetcd.ClusterTicks, 1},
		{"the TUI's and playground etcd's ticks", embedetcd.IdleTicks, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, tc.ticks)
			cli := newClient(t, srv.Endpoints()...)
			ctx := testCtx(t, 10*time.Second)
			g, err := cli.Grant(ctx, 1)
			if err != nil {
				t.Fatalf("grant: %v", err)
			}
			if g.TTL != tc.want {
				t.Errorf("Grant(1) with %d/%d ms ticks returned TTL %d, want %d: "+
					"update content/lessons/06-tuning-the-ttl/lesson.md, "+
					"\"etcd's floor: minimum TTL and whole seconds\", and lesson 02's minimum TTL", tc.ticks.TickMs, tc.ticks.ElectionMs, g.TTL, tc.want)
			}
		})
	}
}

// Lesson 06-tuning-the-ttl, page "When etcd's own leader changes", says
// TimeToLive reports whole seconds rounded down (4.5 s left reads 4).
// Right after Grant(4) a little under 4 s are left, so it must read 3.
func TestTimeToLiveRoundsDown(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 10*time.Second)
	start := time.Now()
	g, err := cli.Grant(ctx, 4)
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
	ttl, err := cli.TimeToLive(ctx, g.ID)
	if err != nil {
		t.Fatalf("time to live: %v", err)
	}
	// Between 4 s and 4 s minus the time both calls took are left.
	// Rounding to the nearest second would read 4; rounding down reads 3
	// (or less on a machine so slow that the calls took over a second).
	want := int64(3)
	if took := time.Since(start); took >= time.Second {
		want = 3 - int64(took/time.Second)
	}
	if ttl.TTL > 3 || ttl.TTL < want || ttl.GrantedTTL != 4 {
		t.Errorf("TimeToLive right after Grant(4) read TTL %d (granted %d), want 3 (granted 4): "+
			"etcd no longer rounds down; update content/lessons/06-tuning-the-ttl/lesson.md, "+
			"\"When etcd's own leader changes\" and its predict page",
			ttl.TTL, ttl.GrantedTTL)
	}
}

// Lesson 06-tuning-the-ttl, page "How long does failover take?", says a
// lease that is not renewed is revoked at the end of its TTL plus at most
// the 500 ms revoke loop, never before the TTL: a TTL-2 key (default
// ticks) vanished after 2.2 to 2.5 s, a TTL-1 key (fast ticks) after 1.4
// to 1.5 s.
func TestExpiryWithinTTLPlusRevokeLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		ticks embedetcd.Ticks
		ttl   int64
	}{
		{"default ticks", embedetcd.DefaultTicks, 2},
		{"fast ticks", embedetcd.FastTicks, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, tc.ticks)
			cli := newClient(t, srv.Endpoints()...)
			ctx := testCtx(t, 10*time.Second)
			g, err := cli.Grant(ctx, tc.ttl)
			if err != nil {
				t.Fatalf("grant: %v", err)
			}
			granted := time.Now()
			put, err := cli.Put(ctx, "facts/expiry", "x", clientv3.WithLease(g.ID))
			if err != nil {
				t.Fatalf("put: %v", err)
			}
			gone := waitDelete(t, ctx, cli, "facts/expiry", put.Header.Revision+1).Sub(granted)
			// 300 ms of slack above TTL + 500 ms covers the revoke's raft
			// commit and the watch event on a loaded machine.
			ttl := time.Duration(tc.ttl) * time.Second
			lo, hi := ttl-50*time.Millisecond, ttl+800*time.Millisecond
			if gone < lo || gone > hi {
				t.Errorf("a TTL-%d key vanished %v after the grant, want between %v and %v "+
					"(TTL plus the 500 ms revoke loop): update content/lessons/06-tuning-the-ttl/lesson.md, "+
					"\"How long does failover take?\"", tc.ttl, gone.Round(time.Millisecond), lo, hi)
			}
			t.Logf("TTL-%d key vanished %v after the grant", tc.ttl, gone.Round(10*time.Millisecond))
		})
	}
}

// content/lessons/06-tuning-the-ttl/lesson.md, page "Putting it together"
// (the table of defaults), and lesson 04 say concurrency.NewSession
// without WithTTL takes a 60 s lease.
func TestSessionDefaultTTL(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	cli := newClient(t, srv.Endpoints()...)
	ctx := testCtx(t, 10*time.Second)
	s, err := concurrency.NewSession(cli)
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer s.Close()
	ttl, err := cli.TimeToLive(ctx, s.Lease())
	if err != nil {
		t.Fatalf("time to live: %v", err)
	}
	if ttl.GrantedTTL != 60 {
		t.Errorf("a session without WithTTL has a %d s lease, want 60: update "+
			"content/lessons/06-tuning-the-ttl/lesson.md, \"Putting it together\", and lesson 04", ttl.GrantedTTL)
	}
}

// content/lessons/06-tuning-the-ttl/lesson.md, page "etcd's floor: minimum
// TTL and whole seconds", says ElectionMs must be at least 5 x TickMs.
func TestElectionTimeoutAtLeastFiveTicks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 20*time.Second)
	srv, err := embedetcd.Start(ctx, embedetcd.WithTicks(embedetcd.Ticks{TickMs: 100, ElectionMs: 400}),
		embedetcd.WithLogger(zap.NewNop()))
	if err == nil {
		srv.Close()
		t.Error("etcd started with ElectionMs 400 and TickMs 100 (4 ticks): update " +
			"content/lessons/06-tuning-the-ttl/lesson.md, \"etcd's floor: minimum TTL and whole seconds\"")
	}
	srv, err = embedetcd.Start(ctx, embedetcd.WithTicks(embedetcd.Ticks{TickMs: 100, ElectionMs: 500}),
		embedetcd.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatalf("etcd refused ElectionMs 500 with TickMs 100 (exactly 5 ticks): %v", err)
	}
	srv.Close()
}
