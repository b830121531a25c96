package etcdharness

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Spy sits between a client and etcd and counts what the client asks for
// and what its watches deliver; it can also run the test's code in the
// middle of a call, to stage a pause or a competitor at the worst moment,
// make a request fail as if etcd could not be reached, and end the
// client's lease keep-alives as the client does when etcd stops answering.
// Attach it to a client before handing the client to the solution.
type Spy struct {
	// Counters, read them with Load.
	Gets       atomic.Int64 // range reads (Get, or Do with a get)
	Puts       atomic.Int64
	Deletes    atomic.Int64
	Txns       atomic.Int64 // committed transactions (attempts)
	Watches    atomic.Int64 // Watch calls
	WakeUps    atomic.Int64 // watch responses with at least one event, delivered
	Events     atomic.Int64 // events delivered, across all responses
	Grants     atomic.Int64 // lease grants asked for (a session asks for one)
	Revokes    atomic.Int64 // lease revokes asked for (Session.Close sends one)
	KeepAlives atomic.Int64 // keep-alive streams opened (one per session)

	requests atomic.Int64 // every request, numbering Request.N

	hookMu    sync.Mutex
	beforeGet func(key string)
	afterGet  func(key string)
	beforeTxn func()
	intercept func(Request) error
	granted   []clientv3.LeaseID
	streams   map[*keepAliveStream]struct{}
}

// RequestKind names the kind of a request a client sends.
type RequestKind string

// The kinds of request the spy sees.
const (
	KindGet       RequestKind = "get"
	KindPut       RequestKind = "put"
	KindDelete    RequestKind = "delete"
	KindTxn       RequestKind = "txn"
	KindWatch     RequestKind = "watch"
	KindGrant     RequestKind = "grant"
	KindRevoke    RequestKind = "revoke"
	KindKeepAlive RequestKind = "keepalive"
	KindLeaseInfo RequestKind = "lease-info" // TimeToLive, Leases
)

// Request is one request the client is about to send, as an interceptor
// sees it.
type Request struct {
	N     int64       // 1 for the first request this spy saw, then 2, ...
	Kind  RequestKind // what is asked
	Key   string      // the key of a get, put, delete or watch
	Then  []clientv3.Op
	Lease clientv3.LeaseID // the lease of a revoke or keep-alive
}

// Deletes reports whether a transaction's success branch deletes a key
// (an unlock, a resign).
func (r Request) Deletes() bool {
	for _, op := range r.Then {
		if op.IsDelete() {
			return true
		}
	}
	return false
}

// Attach wraps cli's KV, Watcher and Lease with a new Spy and returns it.
func Attach(cli *clientv3.Client) *Spy {
	s := &Spy{streams: map[*keepAliveStream]struct{}{}}
	cli.KV = &spyKV{KV: cli.KV, s: s}
	cli.Watcher = &spyWatcher{Watcher: cli.Watcher, s: s}
	cli.Lease = &spyLease{Lease: cli.Lease, s: s}
	return s
}

// Reads is Gets plus transactions: every request that can read state.
func (s *Spy) Reads() int64 { return s.Gets.Load() + s.Txns.Load() }

// Requests is the number of requests the client has sent (or tried to)
// through the spy so far, of every kind.
func (s *Spy) Requests() int64 { return s.requests.Load() }

// Intercept runs f (if not nil) before every request the client sends,
// of every kind, in the caller's goroutine: f may block (a pause), act on
// etcd itself (a competitor stepping in between two of the solution's
// requests), or return an error, which the caller then gets instead of
// an answer and the request is not sent (etcd unreachable, say).
func (s *Spy) Intercept(f func(Request) error) {
	s.hookMu.Lock()
	s.intercept = f
	s.hookMu.Unlock()
}

// BeforeGet runs f (if not nil) at the start of every Get, before the
// request is sent. f may block, to hold the caller there.
func (s *Spy) BeforeGet(f func(key string)) {
	s.hookMu.Lock()
	s.beforeGet = f
	s.hookMu.Unlock()
}

// AfterGet runs f (if not nil) once a Get has its answer and before the
// caller sees it: the place to stage "the check passed, then the process
// paused".
func (s *Spy) AfterGet(f func(key string)) {
	s.hookMu.Lock()
	s.afterGet = f
	s.hookMu.Unlock()
}

// BeforeTxn runs f (if not nil) just before a transaction is sent.
func (s *Spy) BeforeTxn(f func()) {
	s.hookMu.Lock()
	s.beforeTxn = f
	s.hookMu.Unlock()
}

// Granted returns the IDs of the leases granted to the client so far.
func (s *Spy) Granted() []clientv3.LeaseID {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return append([]clientv3.LeaseID(nil), s.granted...)
}

// LoseKeepAlives ends every keep-alive stream the client has open now, the
// way the client ends one by itself once etcd has not answered for a TTL:
// the channel KeepAlive returned closes (so a concurrency.Session's Done
// closes) and the client stops renewing. Streams opened later are not
// affected. It returns the moment the streams were ended and how many
// there were.
//
// A test freezes a replica's network, revokes its lease and then calls
// this: the replica is in the state it would reach on its own up to TTL+1 s
// later, and what is measured from here on is its own code's reaction.
func (s *Spy) LoseKeepAlives() (at time.Time, n int) {
	s.hookMu.Lock()
	streams := s.streams
	s.streams = map[*keepAliveStream]struct{}{}
	s.hookMu.Unlock()
	at = time.Now()
	for st := range streams {
		st.lose()
	}
	return at, len(streams)
}

// KeepAlivesOpen is the number of the client's keep-alive streams that are
// still renewing their lease: opened, and neither ended by the client (its
// context cancelled, the lease gone) nor lost with LoseKeepAlives.
func (s *Spy) KeepAlivesOpen() int {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return len(s.streams)
}

func (s *Spy) hooks() (bg, ag func(string), bt func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return s.beforeGet, s.afterGet, s.beforeTxn
}

// before numbers r and runs the interceptor.
func (s *Spy) before(r Request) error {
	r.N = s.requests.Add(1)
	s.hookMu.Lock()
	f := s.intercept
	s.hookMu.Unlock()
	if f == nil {
		return nil
	}
	return f(r)
}

type spyKV struct {
	clientv3.KV
	s *Spy
}

func (k *spyKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.s.Gets.Add(1)
	if err := k.s.before(Request{Kind: KindGet, Key: key}); err != nil {
		return nil, err
	}
	bg, ag, _ := k.s.hooks()
	if bg != nil {
		bg(key)
	}
	resp, err := k.KV.Get(ctx, key, opts...)
	if ag != nil {
		ag(key)
	}
	return resp, err
}

func (k *spyKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	k.s.Puts.Add(1)
	if err := k.s.before(Request{Kind: KindPut, Key: key}); err != nil {
		return nil, err
	}
	return k.KV.Put(ctx, key, val, opts...)
}

func (k *spyKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	k.s.Deletes.Add(1)
	if err := k.s.before(Request{Kind: KindDelete, Key: key}); err != nil {
		return nil, err
	}
	return k.KV.Delete(ctx, key, opts...)
}

func (k *spyKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	key := string(op.KeyBytes())
	switch {
	case op.IsGet():
		k.s.Gets.Add(1)
		if err := k.s.before(Request{Kind: KindGet, Key: key}); err != nil {
			return clientv3.OpResponse{}, err
		}
		bg, ag, _ := k.s.hooks()
		if bg != nil {
			bg(key)
		}
		resp, err := k.KV.Do(ctx, op)
		if ag != nil {
			ag(key)
		}
		return resp, err
	case op.IsPut():
		k.s.Puts.Add(1)
		if err := k.s.before(Request{Kind: KindPut, Key: key}); err != nil {
			return clientv3.OpResponse{}, err
		}
	case op.IsDelete():
		k.s.Deletes.Add(1)
		if err := k.s.before(Request{Kind: KindDelete, Key: key}); err != nil {
			return clientv3.OpResponse{}, err
		}
	case op.IsTxn():
		k.s.Txns.Add(1)
		_, then, _ := op.Txn()
		if err := k.s.before(Request{Kind: KindTxn, Then: then}); err != nil {
			return clientv3.OpResponse{}, err
		}
		if _, _, bt := k.s.hooks(); bt != nil {
			bt()
		}
	}
	return k.KV.Do(ctx, op)
}

func (k *spyKV) Txn(ctx context.Context) clientv3.Txn {
	return &spyTxn{Txn: k.KV.Txn(ctx), s: k.s}
}

type spyTxn struct {
	clientv3.Txn
	s    *Spy
	then []clientv3.Op
}

func (t *spyTxn) If(cs ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(cs...); return t }
func (t *spyTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.then = append(t.then, ops...)
	t.Txn = t.Txn.Then(ops...)
	return t
}
func (t *spyTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *spyTxn) Commit() (*clientv3.TxnResponse, error) {
	t.s.Txns.Add(1)
	if err := t.s.before(Request{Kind: KindTxn, Then: t.then}); err != nil {
		return nil, err
	}
	if _, _, bt := t.s.hooks(); bt != nil {
		bt()
	}
	return t.Txn.Commit()
}

type spyWatcher struct {
	clientv3.Watcher
	s *Spy
}

func (w *spyWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	w.s.Watches.Add(1)
	if err := w.s.before(Request{Kind: KindWatch, Key: key}); err != nil {
		// A watch has no error return: like a watch etcd cancelled, the
		// channel delivers the error once and closes.
		out := make(chan clientv3.WatchResponse, 1)
		out <- clientv3.WatchResponse{Canceled: true, CancelReason: err.Error()}
		close(out)
		return out
	}
	in := w.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			if n := len(resp.Events); n > 0 {
				w.s.WakeUps.Add(1)
				w.s.Events.Add(int64(n))
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				// The caller stopped listening; drain until etcd closes
				// the channel, which it does for a done context.
				for range in {
				}
				return
			}
		}
	}()
	return out
}

type spyLease struct {
	clientv3.Lease
	s *Spy
}

func (l *spyLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	l.s.Grants.Add(1)
	if err := l.s.before(Request{Kind: KindGrant}); err != nil {
		return nil, err
	}
	resp, err := l.Lease.Grant(ctx, ttl)
	if err == nil {
		l.s.hookMu.Lock()
		l.s.granted = append(l.s.granted, resp.ID)
		l.s.hookMu.Unlock()
	}
	return resp, err
}

func (l *spyLease) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	l.s.Revokes.Add(1)
	if err := l.s.before(Request{Kind: KindRevoke, Lease: id}); err != nil {
		return nil, err
	}
	return l.Lease.Revoke(ctx, id)
}

func (l *spyLease) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	if err := l.s.before(Request{Kind: KindLeaseInfo, Lease: id}); err != nil {
		return nil, err
	}
	return l.Lease.TimeToLive(ctx, id, opts...)
}

func (l *spyLease) Leases(ctx context.Context) (*clientv3.LeaseLeasesResponse, error) {
	if err := l.s.before(Request{Kind: KindLeaseInfo}); err != nil {
		return nil, err
	}
	return l.Lease.Leases(ctx)
}

func (l *spyLease) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	if err := l.s.before(Request{Kind: KindKeepAlive, Lease: id}); err != nil {
		return nil, err
	}
	return l.Lease.KeepAliveOnce(ctx, id)
}

// keepAliveStream forwards one keep-alive channel until it closes or the
// test loses it.
type keepAliveStream struct {
	once sync.Once
	lost chan struct{}
}

func (st *keepAliveStream) lose() { st.once.Do(func() { close(st.lost) }) }

func (l *spyLease) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	l.s.KeepAlives.Add(1)
	if err := l.s.before(Request{Kind: KindKeepAlive, Lease: id}); err != nil {
		return nil, err
	}
	kctx, cancel := context.WithCancel(ctx)
	in, err := l.Lease.KeepAlive(kctx, id)
	if err != nil {
		cancel()
		return nil, err
	}
	st := &keepAliveStream{lost: make(chan struct{})}
	l.s.hookMu.Lock()
	l.s.streams[st] = struct{}{}
	l.s.hookMu.Unlock()
	out := make(chan *clientv3.LeaseKeepAliveResponse, cap(in))
	go func() {
		defer func() {
			cancel() // stop renewing, as the client does when it gives up
			l.s.hookMu.Lock()
			delete(l.s.streams, st)
			l.s.hookMu.Unlock()
			close(out)
		}()
		for {
			select {
			case resp, ok := <-in:
				if !ok {
					return
				}
				// Like the client itself: drop an answer nobody has room for.
				select {
				case out <- resp:
				default:
				}
			case <-st.lost:
				return
			}
		}
	}()
	return out, nil
}

// EachGap runs scenario once without interference (gap 0), to count the
// requests the solution sends, and then once for each of the first eight
// of them (gap k), with the competitor the scenario armed stepping in just
// before request k is sent: between every two requests, and before the
// first. A check split over two requests fails in one of the runs.
func EachGap(t *testing.T, env *Env, scenario func(g *Gap, gap int64)) {
	t.Helper()
	run := func(gap int64) int64 {
		g := &Gap{Env: env, Cli: env.Client()}
		spy := Attach(g.Cli)
		spy.Intercept(func(r Request) error {
			if r.N == gap && g.competitor != nil {
				g.competitor()
			}
			return nil
		})
		scenario(g, gap)
		return spy.Requests()
	}
	n := run(0)
	if n == 0 {
		t.Fatal("the solution sent no request to etcd")
	}
	for gap := int64(1); gap <= min(n, 8); gap++ {
		run(gap)
	}
}

// Gap is the Env of one EachGap run: Cli is the client to hand to the
// solution, watched by a spy.
type Gap struct {
	*Env
	Cli        *clientv3.Client
	competitor func()
}

// Arm sets what the competitor does when the chosen request is sent.
func (g *Gap) Arm(f func()) { g.competitor = f }
