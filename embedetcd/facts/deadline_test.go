package facts

import (
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/faultproxy"
)

// Lessons 03-locks-and-the-ttl-bug ("The watchdog") and 04-renewable-leases
// ("Losing the lease means stopping now") say etcd's client gives up on a lease at
// the time the last keep-alive *reply* arrived plus the TTL, checked once
// a second. The server started its countdown when it handled the request,
// before it replied, so that deadline is later than the server's: a
// watchdog must count from when the request was sent, and stop short.
func TestClientKeepAliveDeadlineIsReplyPlusTTL(t *testing.T) {
	t.Parallel()
	srv := startServer(t, embedetcd.FastTicks)
	addr := strings.TrimPrefix(srv.Endpoints()[0], "http://")
	px, err := faultproxy.New(addr)
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	defer px.Close()
	cli := newClient(t, "http://"+px.Addr())
	ctx := testCtx(t, 20*time.Second)
	const ttl = 3
	g, err := cli.Grant(ctx, ttl)
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
	ch, err := cli.KeepAlive(ctx, g.ID)
	if err != nil {
		t.Fatalf("keep alive: %v", err)
	}
	if _, ok := <-ch; !ok {
		t.Fatal("keep-alive channel closed before the first answer")
	}
	px.Freeze() // no renewal reaches etcd from now on, no reply comes back
	replied := time.Now()
	for range ch {
		replied = time.Now() // an answer already on its way
	}
	closed := time.Since(replied)
	const where = "update content/lessons/03-locks-and-the-ttl-bug/lesson.md (\"The watchdog\") and " +
		"04-renewable-leases (\"Losing the lease means stopping now\")"
	// Deadline = reply + TTL, reaped by a loop that wakes every second;
	// 300 ms of slack for a loaded machine.
	lo, hi := time.Duration(ttl)*time.Second, time.Duration(ttl)*time.Second+1300*time.Millisecond
	if closed < lo || closed > hi {
		t.Errorf("the client closed its keep-alive channel %v after the last reply, want between %v and %v "+
			"(reply + TTL, checked each second): %s", closed.Round(10*time.Millisecond), lo, hi, where)
	}
	t.Logf("keep-alive channel closed %v after the last reply (TTL %d s)", closed.Round(10*time.Millisecond), ttl)
}
