// Package etcdharness gives the graders of the etcd labs (05 to 09) what
// they share: one etcd per test package, a key prefix and clients per test,
// a TCP proxy that can freeze a client's connection, a spy that records
// what a client does whatever the shape of its requests (reads, puts and
// deletes at any depth of a transaction, watches and where they start,
// lease calls), runs the test's code on those events (a pause, a
// competitor, an injected failure) and ends its lease keepalives, and a
// history of fenced writes with a checker for token order.
//
// The etcd is, in this order: the grader's own (the TUI and labcheck run
// one and name it in PLAYGROUND_GRADER_ETCD), a shared cluster the learner
// named in PLAYGROUND_ETCD_ENDPOINTS (keys then go under their prefix), or
// a private server this package starts with
// `go run ./labs/internal/etcdserver`.
// The test binaries never link the etcd server themselves.
//
// Learners may read it to see exactly what the tests do; nothing here is
// part of a lab's answer.
package etcdharness

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/embedetcd/prefix"
	"github.com/ownership-election/playground/internal/faultproxy"
	"github.com/ownership-election/playground/labs/internal/labtest"
)

// EndpointsEnv names the variable that points the graders at an existing
// etcd cluster (comma-separated client URLs) instead of an embedded one.
// Keys then live under the learner's prefix (see package
// embedetcd/prefix). The cluster's TLS files and user come from the other
// PLAYGROUND_ETCD_* variables or PLAYGROUND_CLASS (see package
// embedetcd/access).
const EndpointsEnv = access.EnvEndpoints

// GraderEtcdEnv names the variable through which a grader that runs an
// etcd of its own (the TUI, labcheck) hands it to the tests: comma-separated
// client URLs of a private server, whose keys are used without a prefix.
// It wins over EndpointsEnv. internal/grade.EtcdEnv writes it.
const GraderEtcdEnv = "PLAYGROUND_GRADER_ETCD"

// TestTimeout bounds every test's context: a deadlocked solution fails with
// a message instead of hanging the grader.
const TestTimeout = 20 * time.Second

// alarmMargin is how long before go test's -timeout alarm a test's context
// ends at the latest.
const alarmMargin = 2 * time.Second

var (
	startOnce sync.Once
	shared    *backend
	startErr  error
	seq       atomic.Int64
)

// Main runs a package's tests and then stops the etcd server the package
// started, if it started one. Call it from TestMain:
// os.Exit(etcdharness.Main(m)). Like the pure labs' labtest.Main, it bounds
// a plain go test run to 30 s per -count (go test's own default is ten
// minutes) and stops an init that never returns.
func Main(m *testing.M) int { return MainParallel(m, 0) }

// MainParallel is Main running up to n parallel tests (t.Parallel) at
// once, unless go test's -parallel says how many; n = 0 keeps go test's
// default, one per core. It is for a lab whose many subtests spend their
// time waiting on etcd (a worker reacting to a watch event, a deadline),
// not on the processor: lab 9.1's fifteen subtests ran two at a time on a
// two-core machine, one pair after another, and a wrong solution's
// subtests waited out their deadlines in turn. A lab whose tests ride on
// 1 s leases (lab 7.2) keeps the default: under a heavy load, more of its
// tests at once can starve a keep-alive.
func MainParallel(m *testing.M, n int) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if n > 0 {
		setParallel(n)
	}
	code := labtest.Run(m, 30*time.Second)
	if shared != nil && shared.stop != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "etcdharness: stop the tests' etcd: %v\n", err)
		}
	}
	return code
}

// setParallel sets go test's -parallel to n unless the command line set
// it.
func setParallel(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// backend is the etcd a package's tests share.
type backend struct {
	access    access.Settings // endpoints, and TLS and user on a shared cluster
	namespace string          // the learner prefix on a shared cluster, else ""
	stop      func() error    // set when this process started the server
}

func etcd(t testing.TB) *backend {
	t.Helper()
	startOnce.Do(func() { shared, startErr = openBackend() })
	if startErr != nil {
		t.Fatalf("etcd for the grader: %v", startErr)
	}
	return shared
}

// openBackend picks the etcd to test against: the grader's, else a shared
// cluster named by the learner, else a private server started here.
func openBackend() (*backend, error) {
	if eps := access.SplitEndpoints(os.Getenv(GraderEtcdEnv)); len(eps) > 0 {
		return reachable(&backend{access: access.Settings{Endpoints: eps}}, GraderEtcdEnv)
	}
	shared, err := access.FromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	if shared.Remote() {
		ns := prefix.Default()
		if shared.User != "" {
			ns = prefix.For(shared.User)
		}
		return reachable(&backend{access: shared, namespace: ns}, EndpointsEnv)
	}
	return startServer()
}

// reachable checks that b answers within 5 s.
func reachable(b *backend, from string) (*backend, error) {
	where := strings.Join(b.access.Endpoints, ",")
	if err := b.access.Preflight(context.Background()); err != nil {
		return nil, fmt.Errorf("etcd at %s (from $%s): %w", where, from, err)
	}
	cli, err := b.access.New(zap.NewNop())
	if err != nil {
		return nil, fmt.Errorf("etcd at %s (from $%s): %w", where, from, err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, b.namespace+"reachability-check"); err != nil {
		return nil, fmt.Errorf("etcd at %s (from $%s) does not answer: %w", where, from, b.access.Diagnose(ctx, err))
	}
	return b, nil
}

// serverPkg is the command that runs a private etcd for the tests.
const serverPkg = "github.com/ownership-election/playground/labs/internal/etcdserver"

// serverStartTimeout covers building the server the first time (go run
// caches it after that) as well as starting it.
const serverStartTimeout = 5 * time.Minute

// startServer runs etcdserver with `go run` and waits for its URL. The test
// binary thus never links the etcd server (linking it took 0.6 s of every
// grade); the cached go run takes about 0.4 s, and only when no grader gave
// an etcd. The server stops when its standard input closes: in stop, or
// when this process ends however it ends.
func startServer() (*backend, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "run", serverPkg)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	first := &firstLine{ch: make(chan string, 1)}
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = first, &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", serverPkg, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		stdin.Close()
		select {
		case err := <-exited:
			return err
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			return errors.New("etcd server did not stop within 10 s of its input closing; killed")
		}
	}
	select {
	case url := <-first.ch:
		return &backend{access: access.Settings{Endpoints: []string{url}}, stop: stop}, nil
	case err := <-exited:
		return nil, fmt.Errorf("go run %s: %v: %s", serverPkg, err, strings.TrimSpace(stderr.String()))
	case <-time.After(serverStartTimeout):
		cmd.Process.Kill()
		return nil, fmt.Errorf("go run %s: no etcd URL within %v: %s", serverPkg, serverStartTimeout, strings.TrimSpace(stderr.String()))
	}
}

// firstLine passes on the first line written to it and drops the rest.
type firstLine struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	ch   chan string
}

func (w *firstLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.sent {
		w.buf = append(w.buf, p...)
		if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
			w.sent = true
			w.ch <- strings.TrimSpace(string(w.buf[:i]))
			w.buf = nil
		}
	}
	return len(p), nil
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Env is one test's corner of the shared etcd: its own key prefix, clients
// that are closed when the test ends, and a context with a deadline.
type Env struct {
	t    testing.TB
	etcd *backend
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
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	e.Prefix = fmt.Sprintf("/grader/%s/%d-%d", name, os.Getpid(), seq.Add(1))
	deadline := time.Now().Add(TestTimeout)
	// Under go test -timeout, end a little before the testing package's
	// alarm does, so that a blocked call fails its own test with a message
	// instead of the whole binary panicking (tests run a few at a time, so
	// a later one may start close to that alarm).
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if alarm, ok := d.Deadline(); ok && alarm.Add(-alarmMargin).Before(deadline) {
			deadline = alarm.Add(-alarmMargin)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
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

// Sub returns the Env for t, a subtest of the Env's test: the same prefix,
// context and admin client, but a helper that fails stops t, the test
// running in the calling goroutine. (Failing the parent test from a
// subtest's goroutine is a Go testing error that hides the real message.)
func (e *Env) Sub(t testing.TB) *Env {
	sub := *e
	sub.t = t
	return &sub
}

// setupFailed fails the test because the test's own request (a grant, a
// read) failed. When the test's deadline has passed, the cause is almost
// always a call into the solution that blocked until then, and the
// message says so rather than blaming the request.
func (e *Env) setupFailed(what string, err error) {
	e.t.Helper()
	if e.Ctx.Err() != nil {
		e.t.Fatalf("the test's deadline passed before it could %s: an earlier call into your code kept running (blocked?) until then", what)
	}
	e.t.Fatalf("test setup: %s: %v", what, err)
}

// Expired reports whether err is the test context's deadline: the code
// under test blocked until the test gave up on it. Use it to say so in a
// failure message.
func (e *Env) Expired(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) && e.Ctx.Err() != nil
}

// Key joins parts under the test's prefix.
func (e *Env) Key(parts ...string) string {
	return e.Prefix + "/" + strings.Join(parts, "/")
}

// Client returns a new client of its own (its own connection, leases and
// watches, like a separate replica); it is closed when the test ends.
func (e *Env) Client() *clientv3.Client {
	e.t.Helper()
	cfg, err := e.etcd.access.ClientConfig(zap.NewNop())
	if err != nil {
		e.t.Fatalf("etcd client: %v", err)
	}
	return e.clientFor(cfg)
}

// ProxiedClient returns a new client whose only connection runs through a
// fault proxy, so the test can hurt that one replica's network. Freeze
// stops bytes flowing both ways while the connection stays open, which is
// what a partition or a long pause looks like from etcd's side: the
// replica's keepalives stop arriving and its lease runs out, and the
// replica hears nothing back. Thaw lets the held bytes through.
func (e *Env) ProxiedClient() (*clientv3.Client, *faultproxy.Proxy) {
	e.t.Helper()
	eps := e.etcd.access.Endpoints
	p, err := faultproxy.New(strings.TrimPrefix(strings.TrimPrefix(eps[0], "http://"), "https://"))
	if err != nil {
		e.t.Fatalf("start fault proxy: %v", err)
	}
	e.t.Cleanup(func() { p.Close() })
	cfg, err := e.etcd.access.ClientConfigVia([]string{p.Addr()}, zap.NewNop())
	if err != nil {
		e.t.Fatalf("etcd client: %v", err)
	}
	return e.clientFor(cfg), p
}

func (e *Env) clientFor(cfg clientv3.Config) *clientv3.Client {
	e.t.Helper()
	cli, err := clientv3.New(cfg)
	if err != nil {
		e.t.Fatalf("etcd client: %v", err)
	}
	if e.etcd.namespace != "" {
		cli.KV = namespace.NewKV(cli.KV, e.etcd.namespace)
		cli.Watcher = namespace.NewWatcher(cli.Watcher, e.etcd.namespace)
		cli.Lease = namespace.NewLease(cli.Lease, e.etcd.namespace)
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
		e.setupFailed(fmt.Sprintf("grant a %d s lease", ttl), err)
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
		e.setupFailed(fmt.Sprintf("revoke lease %x", int64(id)), err)
	}
}

// Get reads one key; ok is false when it does not exist.
func (e *Env) Get(key string) (kv KeyValue, ok bool) {
	e.t.Helper()
	resp, err := e.Admin.Get(e.Ctx, key)
	if err != nil {
		e.setupFailed("read "+key, err)
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
		e.setupFailed("list "+prefix, err)
	}
	out := make([]KeyValue, 0, len(resp.Kvs))
	for _, k := range resp.Kvs {
		out = append(out, KeyValue{Key: string(k.Key), Value: string(k.Value), CreateRevision: k.CreateRevision,
			ModRevision: k.ModRevision, Lease: clientv3.LeaseID(k.Lease)})
	}
	return out
}

// LeaseInfo is a lease as the test reads it back.
type LeaseInfo struct {
	TTL        int64 // seconds left
	GrantedTTL int64 // the TTL it was granted with
}

// Lease reads lease id; ok is false when it does not exist any more
// (revoked or expired).
func (e *Env) Lease(id clientv3.LeaseID) (info LeaseInfo, ok bool) {
	e.t.Helper()
	resp, err := e.Admin.TimeToLive(e.Ctx, id)
	if err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return LeaseInfo{}, false
		}
		e.setupFailed(fmt.Sprintf("read lease %x", int64(id)), err)
	}
	if resp.TTL < 0 {
		return LeaseInfo{}, false
	}
	return LeaseInfo{TTL: resp.TTL, GrantedTTL: resp.GrantedTTL}, true
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
