package facts

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
)

// startServer starts a quiet single-member etcd with the given ticks and
// closes it when the test ends.
func startServer(t *testing.T, ticks embedetcd.Ticks) *embedetcd.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := embedetcd.Start(ctx, embedetcd.WithTicks(ticks), embedetcd.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// newClient dials endpoints with a silent logger and closes the client
// when the test ends (before the server, so the server stops at once).
func newClient(t *testing.T, endpoints ...string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// testCtx is a context that ends with the test or after d.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitDelete blocks until key is deleted (watching from rev) and returns
// when the DELETE event arrived.
func waitDelete(t *testing.T, ctx context.Context, cli *clientv3.Client, key string, rev int64) time.Time {
	t.Helper()
	for wr := range cli.Watch(ctx, key, clientv3.WithRev(rev)) {
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return time.Now()
			}
		}
		if err := wr.Err(); err != nil {
			t.Fatalf("watch %s: %v", key, err)
		}
	}
	t.Fatalf("watch %s ended without a DELETE: %v", key, ctx.Err())
	return time.Time{}
}

// drainLease reads id's TTL every 50 ms until it reads at most until and
// returns that reading: a wait on what etcd says is left, where a fixed
// sleep would overshoot on a busy machine.
func drainLease(t *testing.T, ctx context.Context, cli *clientv3.Client, id clientv3.LeaseID, until int64) int64 {
	t.Helper()
	for {
		r, err := cli.TimeToLive(ctx, id)
		if err != nil {
			t.Fatalf("time to live: %v", err)
		}
		if r.TTL <= until {
			return r.TTL
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("the lease still read %d when the test's time ran out", r.TTL)
		}
	}
}

// restartedAt checks the TTL a lease read right after a leader move
// begun at start and read at read. The new leader restarts every lease
// at its full TTL plus the election timeout (ClusterTicks': 500 ms) at
// some moment between the two, so the reading is ttl when that span is
// under the election timeout, and never below floor(ttl + timeout -
// span) however busy the machine; it is never above ttl. A lease the
// move did not restart would read at most before. It returns the
// election timeout and the span.
func restartedAt(t *testing.T, ttl, before, after int64, start, read time.Time, where string) (time.Duration, time.Duration) {
	t.Helper()
	et := time.Duration(embedetcd.ClusterTicks.ElectionMs) * time.Millisecond
	span := read.Sub(start)
	lo := min(ttl, int64((time.Duration(ttl)*time.Second + et - span).Seconds()))
	if lo <= before {
		t.Fatalf("the move and the read took %v: too slow for the reading to tell a restarted lease from one "+
			"that still had %d s", span.Round(10*time.Millisecond), before)
	}
	if after < lo || after > ttl {
		t.Errorf("right after the leader move the lease read %d, want %d to %d (full TTL plus the %v election timeout, "+
			"less the %v the move and the read took, rounded down): %s", after, lo, ttl, et, span.Round(10*time.Millisecond), where)
	}
	return et, span
}
