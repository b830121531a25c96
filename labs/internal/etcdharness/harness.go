// Package etcdharness gives the graders of the etcd labs (05 to 09) what
// they share: one etcd per test package, a key prefix and clients per test,
// a TCP proxy that can freeze a client's connection, a spy that counts a
// client's reads and watch events, and a history of fenced writes with a
// checker for token order.
//
// Learners may read it to see exactly what the tests do; nothing here is
// part of a lab's answer.
package etcdharness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/faultproxy"
)

// EndpointsEnv names the variable that points the graders at an existing
// etcd cluster (comma-separated client URLs) instead of an embedded one.
// Keys then live under the learner's prefix (see embedetcd.DefaultPrefix).
const EndpointsEnv = "PLAYGROUND_ETCD_ENDPOINTS"

// TestTimeout bounds every test's context: a deadlocked solution fails with
// a message instead of hanging the grader.
const TestTimeout = 20 * time.Second

var (
	startOnce sync.Once
	shared    embedetcd.Etcd
	startErr  error
	seq       atomic.Int64
)

// Main runs a package's tests and then stops the shared etcd, if one was
// started. Call it from TestMain: os.Exit(etcdharness.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	return code
}

func endpointsFromEnv() []string {
	var eps []string
	for _, ep := range strings.Split(os.Getenv(EndpointsEnv), ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	return eps
}

func etcd(t testing.TB) embedetcd.Etcd {
	t.Helper()
	startOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		shared, startErr = embedetcd.Open(ctx, endpointsFromEnv())
	})
	if startErr != nil {
		t.Fatalf("start etcd for the grader: %v (log: %s)", startErr, embedetcd.LogPath())
	}
	return shared
}

// Env is one test's corner of the shared etcd: its own key prefix, clients
// that are closed when the test ends, and a context with a deadline.
type Env struct {
	t         testing.TB
	etcd      embedetcd.Etcd
	namespace string // the learner prefix on a shared cluster, else ""
	// Prefix is unique to this test (and this run), ends without a slash
	// and is where the test's keys go: Prefix + "/lock", say.
	Prefix string
	// Ctx is cancelled when the test ends or after TestTimeout.
	Ctx context.Context
	// Admin is a client for the test's own reads, grants and revokes.
	Admin *clientv3.Client
}

// New starts the package's etcd if needed and returns a fresh Env.
func New(t testing.TB) *Env {
	t.Helper()
	e := &Env{t: t, etcd: etcd(t)}
	if r, ok := e.etcd.(*embedetcd.Remote); ok {
		e.namespace = r.Prefix()
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	e.Prefix = fmt.Sprintf("/grader/%s/%d-%d", name, os.Getpid(), seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), TestTimeout)
	t.Cleanup(cancel)
	e.Ctx = ctx
	e.Admin = e.Client()
	// On a shared cluster nothing should pile up from run to run. This
	// runs after the test's own clients are closed and its replicas are
	// stopped (cleanups run last-registered first).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		e.Admin.Delete(ctx, e.Prefix+"/", clientv3.WithPrefix())
	})
	return e
}

// Key joins parts under the test's prefix.
func (e *Env) Key(parts ...string) string {
	return e.Prefix + "/" + strings.Join(parts, "/")
}

// Client returns a new client of its own (its own connection, leases and
// watches, like a separate replica); it is closed when the test ends.
func (e *Env) Client() *clientv3.Client {
	e.t.Helper()
	return e.clientFor(e.etcd.Endpoints())
}

// ProxiedClient returns a new client whose only connection runs through a
// fault proxy, so the test can hurt that one replica's network. Freeze
// stops bytes flowing both ways while the connection stays open, which is
// what a partition or a long pause looks like from etcd's side: the
// replica's keepalives stop arriving and its lease runs out, and the
// replica hears nothing back. Thaw lets the held bytes through.
func (e *Env) ProxiedClient() (*clientv3.Client, *faultproxy.Proxy) {
	e.t.Helper()
	eps := e.etcd.Endpoints()
	p, err := faultproxy.New(strings.TrimPrefix(strings.TrimPrefix(eps[0], "http://"), "https://"))
	if err != nil {
		e.t.Fatalf("start fault proxy: %v", err)
	}
	e.t.Cleanup(func() { p.Close() })
	return e.clientFor([]string{"http://" + p.Addr()}), p
}

func (e *Env) clientFor(endpoints []string) *clientv3.Client {
	e.t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		e.t.Fatalf("etcd client: %v", err)
	}
	if e.namespace != "" {
		cli.KV = namespace.NewKV(cli.KV, e.namespace)
		cli.Watcher = namespace.NewWatcher(cli.Watcher, e.namespace)
		cli.Lease = namespace.NewLease(cli.Lease, e.namespace)
	}
	e.t.Cleanup(func() { cli.Close() })
	return cli
}

// Grant creates a lease of ttl seconds that nobody keeps alive; the test
// ends it with Revoke.
func (e *Env) Grant(ttl int64) clientv3.LeaseID {
	e.t.Helper()
	resp, err := e.Admin.Grant(e.Ctx, ttl)
	if err != nil {
		e.t.Fatalf("grant a %d s lease: %v", ttl, err)
	}
	return resp.ID
}

// Revoke ends a lease now, deleting every key attached to it: how the
// graders force an expiry without waiting for the TTL. A lease that has
// already ended (its holder revoked it on the way down) is not an error:
// either way it is over.
func (e *Env) Revoke(id clientv3.LeaseID) {
	e.t.Helper()
	if _, err := e.Admin.Revoke(e.Ctx, id); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		e.t.Fatalf("revoke lease %x: %v", int64(id), err)
	}
}

// Get reads one key; ok is false when it does not exist.
func (e *Env) Get(key string) (kv KeyValue, ok bool) {
	e.t.Helper()
	resp, err := e.Admin.Get(e.Ctx, key)
	if err != nil {
		e.t.Fatalf("read %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return KeyValue{}, false
	}
	k := resp.Kvs[0]
	return KeyValue{Key: string(k.Key), Value: string(k.Value), CreateRevision: k.CreateRevision,
		ModRevision: k.ModRevision, Lease: clientv3.LeaseID(k.Lease)}, true
}

// List reads every key under prefix, oldest CreateRevision first.
func (e *Env) List(prefix string) []KeyValue {
	e.t.Helper()
	resp, err := e.Admin.Get(e.Ctx, prefix, clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		e.t.Fatalf("list %s: %v", prefix, err)
	}
	out := make([]KeyValue, 0, len(resp.Kvs))
	for _, k := range resp.Kvs {
		out = append(out, KeyValue{Key: string(k.Key), Value: string(k.Value), CreateRevision: k.CreateRevision,
			ModRevision: k.ModRevision, Lease: clientv3.LeaseID(k.Lease)})
	}
	return out
}

// KeyValue is a key as the test reads it back.
type KeyValue struct {
	Key            string
	Value          string
	CreateRevision int64
	ModRevision    int64
	Lease          clientv3.LeaseID
}

// WaitFor calls cond after every change under prefix (and every 20 ms, for
// conditions on the solution's own state) until it returns true. It fails
// the test with what once d has passed. A deadline here is a bound on how
// long a correct solution may take, never the thing being measured.
func (e *Env) WaitFor(prefix string, d time.Duration, what string, cond func() bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, d)
	defer cancel()
	wch := e.Admin.Watch(ctx, prefix, clientv3.WithPrefix())
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return
		}
		select {
		case <-tick.C:
		case _, ok := <-wch:
			if !ok && ctx.Err() == nil {
				wch = e.Admin.Watch(ctx, prefix, clientv3.WithPrefix())
			}
		case <-ctx.Done():
			if cond() {
				return
			}
			e.t.Fatalf("waited %v for %s", d, what)
		}
	}
}
