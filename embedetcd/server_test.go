package embedetcd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/testwait"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "embedetcd-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("PLAYGROUND_STATE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func start(t *testing.T, opts ...Option) *Server {
	t.Helper()
	srv, err := Start(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func client(t *testing.T, e Etcd) *clientv3.Client {
	t.Helper()
	cli, err := e.Client()
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestPutGet(t *testing.T) {
	srv := start(t)
	cli := client(t, srv)
	ctx := ctxT(t, 5*time.Second)
	if _, err := cli.Put(ctx, "greeting", "hello"); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, "greeting")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "hello" {
		t.Fatalf("get greeting: %v", resp.Kvs)
	}
}

func TestOneSecondLeaseExpiresWithinTwoSeconds(t *testing.T) {
	srv := start(t)
	cli := client(t, srv)
	ctx := ctxT(t, 10*time.Second)
	lease, err := cli.Grant(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if lease.TTL != 1 {
		t.Fatalf("fast ticks should allow a 1 s lease, got TTL %d", lease.TTL)
	}
	if _, err := cli.Put(ctx, "owner", "a", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	var getErr error
	testwait.Until(t, 2*time.Second, "the key of a 1 s lease to go", func() bool {
		resp, err := cli.Get(ctx, "owner")
		getErr = err
		return err != nil || len(resp.Kvs) == 0
	})
	if getErr != nil {
		t.Fatal(getErr)
	}
}

func TestTwoServersSideBySide(t *testing.T) {
	a, b := start(t), start(t)
	if a.Endpoints()[0] == b.Endpoints()[0] {
		t.Fatalf("both servers on %s", a.Endpoints()[0])
	}
	ctx := ctxT(t, 5*time.Second)
	if _, err := client(t, a).Put(ctx, "k", "a"); err != nil {
		t.Fatal(err)
	}
	resp, err := client(t, b).Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 0 {
		t.Fatal("second server sees the first one's key: they share data")
	}
}

// TestListensOnLoopbackOnly reads the kernel's socket table for every
// listening socket this process owns and requires a loopback address.
func TestListensOnLoopbackOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc; Linux only")
	}
	srv := start(t)
	cl, err := StartCluster(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, ep := range append(srv.Endpoints(), cl.Endpoints()...) {
		if !strings.HasPrefix(ep, "http://127.0.0.1:") {
			t.Errorf("endpoint %s is not loopback", ep)
		}
	}
	mine := socketInodes(t)
	listening := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !mine[fields[9]] {
				continue
			}
			listening++
			addr := strings.Split(fields[1], ":")[0]
			if addr != "0100007F" && addr != "00000000000000000000000001000000" {
				t.Errorf("listening on non-loopback address %s (%s)", fields[1], f)
			}
		}
		file.Close()
	}
	// one server (client + peer) and three members (client, peer, proxy)
	if listening < 2+9 {
		t.Fatalf("found only %d listening sockets of ours; the check is not seeing them", listening)
	}
}

func socketInodes(t *testing.T) map[string]bool {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	return out
}

func TestCloseWithLiveSessionsRemovesDir(t *testing.T) {
	parent := t.TempDir()
	srv, err := Start(context.Background(), WithDataDir(parent))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		cli := client(t, srv)
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Put(context.Background(), fmt.Sprint("s", i), "x", clientv3.WithLease(s.Lease())); err != nil {
			t.Fatal(err)
		}
	}
	dir := srv.dir.path
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("data dir missing while running: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("data dir %s still there after Close (err=%v)", dir, err)
	}
	if _, err := srv.Client(); err == nil {
		t.Fatal("Client after Close should fail")
	}
}

func TestStaleDataDirRemovedOnStart(t *testing.T) {
	parent := t.TempDir()
	stale := filepath.Join(parent, "member-12345")
	if err := os.MkdirAll(filepath.Join(stale, "member", "wal"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Left behind by a process that died a while ago: a fresh lock file
	// may belong to a start that has not locked it yet.
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(stale+".lock", old, old); err != nil {
		t.Fatal(err)
	}
	live := start(t, WithDataDir(parent))
	second := start(t, WithDataDir(parent))
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale dir survived a start: %v", err)
	}
	if _, err := os.Stat(live.dir.path); err != nil {
		t.Fatalf("a running server's dir was removed by another start: %v", err)
	}
	_ = second
}

// Starts at the same moment share the data dir parent; none may take
// another's fresh, not yet locked lock file for stale.
func TestParallelStartsShareTheDataDirParent(t *testing.T) {
	parent := t.TempDir()
	const n = 10
	errs := make(chan error, n)
	for range n {
		go func() {
			srv, err := Start(context.Background(), WithDataDir(parent))
			if err == nil {
				err = srv.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("parallel start: %v", err)
		}
	}
}

func TestStartFailsCleanly(t *testing.T) {
	t.Run("unwritable dir", func(t *testing.T) {
		// A file where the data dir should be fails even for root.
		f := filepath.Join(t.TempDir(), "not-a-dir")
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Start(context.Background(), WithDataDir(f))
		if err == nil || !strings.Contains(err.Error(), "start etcd") {
			t.Fatalf("want a wrapped start error, got %v", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Start(ctx)
		if err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Fatalf("want context canceled, got %v", err)
		}
	})
	t.Run("port in use", func(t *testing.T) {
		a := start(t)
		port := strings.TrimPrefix(a.Endpoints()[0], "http://127.0.0.1:")
		var p int
		fmt.Sscan(port, &p)
		_, err := Start(context.Background(), WithListen("127.0.0.1", p))
		if err == nil {
			t.Fatal("second server on a busy port should fail")
		}
	})
}

func TestRemoteKeepsKeysUnderPrefix(t *testing.T) {
	srv := start(t)
	ctx := ctxT(t, 5*time.Second)
	r, err := Connect(ctx, access.Settings{Endpoints: srv.Endpoints()}, "/playground/ada/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := client(t, r).Put(ctx, "lock", "1"); err != nil {
		t.Fatal(err)
	}
	resp, err := client(t, srv).Get(ctx, "/playground/ada/lock")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatal("namespaced put did not land under the prefix")
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := Connect(short, access.Settings{Endpoints: []string{"http://127.0.0.1:1"}}, "/x/"); !errors.Is(err, access.ErrUnreachable) {
		t.Fatalf("connect to a dead endpoint: %v, want ErrUnreachable", err)
	}
}

// TestIdleTicksKeepOneSecondLeases: the terminal interface's etcd runs on
// IdleTicks, and the course tells learners the shortest lease is 1 s.
func TestIdleTicksKeepOneSecondLeases(t *testing.T) {
	srv, err := Start(ctxT(t, 10*time.Second), WithTicks(IdleTicks))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := ctxT(t, 10*time.Second)
	l, err := client(t, srv).Grant(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.TTL != 1 {
		t.Errorf("a 1 s lease on IdleTicks was granted %d s, want 1", l.TTL)
	}
}
