package etcdharness

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Spy sits between a client and etcd and records what the client does,
// whatever shape its requests take: every read (a Get, or a Range inside a
// transaction, nested or not), every comparison, put and delete (at the
// top of a request or in a transaction's branches), every watch with its
// start revision, and every lease call. The test can run its own code
// before any request, on those events (to stage a pause or a competitor at
// the worst moment, or make a request fail as if etcd could not be
// reached), run code once a request has its answer, and end the client's
// lease keep-alives as the client does when etcd stops answering. Attach
// it to a client before handing the client to the solution.
type Spy struct {
	// Counters, read them with Load. A request counts once per kind of
	// access it makes, wherever in the request it sits: a transaction that
	// reads and deletes counts in Reads and in Deletes.
	Reads      atomic.Int64 // requests that read a range: Get, or Txn/Do with a Range anywhere
	Puts       atomic.Int64 // requests that put a key anywhere
	Deletes    atomic.Int64 // requests that delete anywhere
	Txns       atomic.Int64 // transactions sent (attempts)
	Watches    atomic.Int64 // Watch calls
	WakeUps    atomic.Int64 // watch responses with at least one event, delivered
	Events     atomic.Int64 // events delivered, across all responses
	Grants     atomic.Int64 // lease grants asked for (a session asks for one)
	Revokes    atomic.Int64 // lease revokes asked for (Session.Close sends one)
	KeepAlives atomic.Int64 // keep-alive streams opened (one per session)

	requests atomic.Int64 // every request, numbering Request.N

	hookMu    sync.Mutex
	intercept func(Request) error
	after     func(Request, error)
	granted   []clientv3.LeaseID
	streams   map[*keepAliveStream]struct{}
	lastRead  int64 // the store revision of the newest read answered
	watched   []WatchStart
}

// RequestKind names the API call a client makes. What the call does is in
// Request.Ops: a transaction may read, put and delete.
type RequestKind string

// The kinds of request the spy sees.
const (
	KindGet       RequestKind = "get"
	KindPut       RequestKind = "put"
	KindDelete    RequestKind = "delete"
	KindTxn       RequestKind = "txn" // Txn().Commit() or Do(OpTxn)
	KindWatch     RequestKind = "watch"
	KindGrant     RequestKind = "grant"
	KindRevoke    RequestKind = "revoke"
	KindKeepAlive RequestKind = "keepalive"
	KindLeaseInfo RequestKind = "lease-info" // TimeToLive, Leases
)

// AccessOp is what one operation inside a request does to the store.
type AccessOp string

// The operations a request can carry.
const (
	OpRead    AccessOp = "read"    // a range read
	OpCompare AccessOp = "compare" // a transaction's comparison
	OpPut     AccessOp = "put"
	OpDelete  AccessOp = "delete"
)

// Access is one operation of a request: the request itself for a Get, Put
// or Delete; for a transaction each comparison and each operation of its
// branches, those of nested transactions included.
type Access struct {
	Op     AccessOp
	Key    string
	End    string // range end: "" for one key, "\x00" for every key from Key on
	Rev    int64  // the revision a read asks for (WithRev); 0 is the latest
	Depth  int    // 0 for a plain request, 1 in a transaction, 2 in a transaction nested in it, ...
	InElse bool   // in an Else branch (of this transaction or of one it is nested in)
}

// Covers reports whether the access touches key: the key itself, or a
// range that holds it.
func (a Access) Covers(key string) bool {
	switch a.End {
	case "":
		return a.Key == key
	case "\x00":
		return key >= a.Key
	default:
		return key >= a.Key && key < a.End
	}
}

// Request is one request the client is about to send, as an interceptor
// sees it.
type Request struct {
	N     int64            // 1 for the first request this spy saw, then 2, ...
	Kind  RequestKind      // the API call
	Key   string           // the key of a get, put, delete or watch
	End   string           // its range end, as in Access
	Rev   int64            // the revision a get asks for, or where a watch starts (0: now)
	Ops   []Access         // every operation in the request, nested ones included
	Lease clientv3.LeaseID // the lease of a revoke or keep-alive
}

func (r Request) any(f func(Access) bool) bool {
	for _, a := range r.Ops {
		if f(a) {
			return true
		}
	}
	return false
}

// Reads reports whether the request reads a range, anywhere in it.
func (r Request) Reads() bool { return r.any(func(a Access) bool { return a.Op == OpRead }) }

// ReadsKey reports whether the request reads key (a range that holds it,
// anywhere in the request) or compares it.
func (r Request) ReadsKey(key string) bool {
	return r.any(func(a Access) bool { return (a.Op == OpRead || a.Op == OpCompare) && a.Covers(key) })
}

// ReadsUnder reports whether the request reads a range that holds a key
// under prefix.
func (r Request) ReadsUnder(prefix string) bool {
	return r.any(func(a Access) bool {
		return a.Op == OpRead && (strings.HasPrefix(a.Key, prefix) || a.Covers(prefix) || a.End != "" && a.Key < prefix && prefix < a.End)
	})
}

// Writes reports whether the request puts or deletes, anywhere in it.
func (r Request) Writes() bool {
	return r.any(func(a Access) bool { return a.Op == OpPut || a.Op == OpDelete })
}

// Deletes reports whether the request deletes, anywhere in it (an unlock,
// a resign, a release).
func (r Request) Deletes() bool { return r.any(func(a Access) bool { return a.Op == OpDelete }) }

// Puts reports whether the request puts a key, anywhere in it (a claim, a
// campaign).
func (r Request) Puts() bool { return r.any(func(a Access) bool { return a.Op == OpPut }) }

// Written returns the keys the request may put or delete outside of any
// Else branch, with the operation: the writes it makes when its
// comparisons hold.
func (r Request) Written() []Access {
	var out []Access
	for _, a := range r.Ops {
		if (a.Op == OpPut || a.Op == OpDelete) && !a.InElse {
			out = append(out, a)
		}
	}
	return out
}

// WatchStart is one watch the client opened.
type WatchStart struct {
	N        int64  // the request number
	Key, End string // what it watches
	Rev      int64  // where it starts: 0 is "now", the revision etcd is at when it sets the watch up
	LastRead int64  // the store revision of the newest read answered before it (0: none)
}

// Attach wraps cli's KV, Watcher and Lease with a new Spy and returns it.
func Attach(cli *clientv3.Client) *Spy {
	s := &Spy{streams: map[*keepAliveStream]struct{}{}}
	cli.KV = &spyKV{KV: cli.KV, s: s}
	cli.Watcher = &spyWatcher{Watcher: cli.Watcher, s: s}
	cli.Lease = &spyLease{Lease: cli.Lease, s: s}
	return s
}

// InCall reports whether the calling goroutine is inside a call to
// function, named as the runtime names it (for example
// "go.etcd.io/etcd/client/v3/concurrency.(*Election).Campaign"). An
// interceptor runs in the goroutine of the request it sees, so it can tell
// the requests a library call sends on the solution's behalf from those
// the solution sends itself.
func InCall(function string) bool {
	pcs := make([]uintptr, 256)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if f.Function == function {
			return true
		}
		if !more {
			return false
		}
	}
}

// Requests is the number of requests the client has sent (or tried to)
// through the spy so far, of every kind.
func (s *Spy) Requests() int64 { return s.requests.Load() }

// Intercept runs f (if not nil) before every request the client sends,
// of every kind, in the caller's goroutine: f may block (a pause), act on
// etcd itself (a competitor stepping in between two of the solution's
// requests), or return an error, which the caller then gets instead of
// an answer and the request is not sent (etcd unreachable, say). Decide
// on what the request does (r.Reads(), r.ReadsKey(k), r.Deletes(), ...)
// rather than on its Kind, so that every shape of request counts.
func (s *Spy) Intercept(f func(Request) error) {
	s.hookMu.Lock()
	s.intercept = f
	s.hookMu.Unlock()
}

// After runs f (if not nil) once a get, put, delete or transaction has its
// answer (err is its error) and before the caller sees it: the place to
// stage "the read was done, then the process paused".
func (s *Spy) After(f func(r Request, err error)) {
	s.hookMu.Lock()
	s.after = f
	s.hookMu.Unlock()
}

// Granted returns the IDs of the leases granted to the client so far.
func (s *Spy) Granted() []clientv3.LeaseID {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return append([]clientv3.LeaseID(nil), s.granted...)
}

// Watched returns the watches the client opened so far, oldest first.
func (s *Spy) Watched() []WatchStart {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return append([]WatchStart(nil), s.watched...)
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

// before counts and numbers r and runs the interceptor.
func (s *Spy) before(r *Request) error {
	r.N = s.requests.Add(1)
	s.count(*r)
	s.hookMu.Lock()
	f := s.intercept
	s.hookMu.Unlock()
	if f == nil {
		return nil
	}
	return f(*r)
}

func (s *Spy) count(r Request) {
	if r.Kind == KindTxn {
		s.Txns.Add(1)
	}
	if r.Reads() {
		s.Reads.Add(1)
	}
	if r.Puts() {
		s.Puts.Add(1)
	}
	if r.Deletes() {
		s.Deletes.Add(1)
	}
}

// answered runs the after hook and notes the revision of a read.
func (s *Spy) answered(r Request, rev int64, err error) {
	s.hookMu.Lock()
	if err == nil && r.Reads() && rev > s.lastRead {
		s.lastRead = rev
	}
	f := s.after
	s.hookMu.Unlock()
	if f != nil {
		f(r, err)
	}
}

// opRequest describes a single operation (as given to Do, or built from a
// Get, Put or Delete call's key and options).
func opRequest(op clientv3.Op) Request {
	switch {
	case op.IsTxn():
		cmps, then, els := op.Txn()
		return Request{Kind: KindTxn, Ops: txnAccesses(cmps, then, els, 1, false)}
	case op.IsGet():
		return single(KindGet, OpRead, op)
	case op.IsPut():
		return single(KindPut, OpPut, op)
	default:
		return single(KindDelete, OpDelete, op)
	}
}

func single(kind RequestKind, what AccessOp, op clientv3.Op) Request {
	a := opAccess(what, op, 0, false)
	return Request{Kind: kind, Key: a.Key, End: a.End, Rev: a.Rev, Ops: []Access{a}}
}

func opAccess(what AccessOp, op clientv3.Op, depth int, inElse bool) Access {
	return Access{Op: what, Key: string(op.KeyBytes()), End: string(op.RangeBytes()), Rev: op.Rev(), Depth: depth, InElse: inElse}
}

// txnAccesses flattens a transaction: its comparisons, then its branches,
// nested transactions included.
func txnAccesses(cmps []clientv3.Cmp, then, els []clientv3.Op, depth int, inElse bool) []Access {
	var out []Access
	for _, c := range cmps {
		pc := c.GetCompare()
		out = append(out, Access{Op: OpCompare, Key: string(pc.Key), End: string(pc.RangeEnd), Depth: depth, InElse: inElse})
	}
	branch := func(ops []clientv3.Op, inElse bool) {
		for _, op := range ops {
			switch {
			case op.IsTxn():
				c, t, e := op.Txn()
				out = append(out, txnAccesses(c, t, e, depth+1, inElse)...)
			case op.IsGet():
				out = append(out, opAccess(OpRead, op, depth, inElse))
			case op.IsPut():
				out = append(out, opAccess(OpPut, op, depth, inElse))
			case op.IsDelete():
				out = append(out, opAccess(OpDelete, op, depth, inElse))
			}
		}
	}
	branch(then, inElse)
	branch(els, true)
	return out
}

type spyKV struct {
	clientv3.KV
	s *Spy
}

func (k *spyKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	r := opRequest(clientv3.OpGet(key, opts...))
	if err := k.s.before(&r); err != nil {
		return nil, err
	}
	resp, err := k.KV.Get(ctx, key, opts...)
	k.s.answered(r, headerRev(resp, err), err)
	return resp, err
}

func (k *spyKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	r := opRequest(clientv3.OpPut(key, val, opts...))
	if err := k.s.before(&r); err != nil {
		return nil, err
	}
	resp, err := k.KV.Put(ctx, key, val, opts...)
	k.s.answered(r, 0, err)
	return resp, err
}

func (k *spyKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	r := opRequest(clientv3.OpDelete(key, opts...))
	if err := k.s.before(&r); err != nil {
		return nil, err
	}
	resp, err := k.KV.Delete(ctx, key, opts...)
	k.s.answered(r, 0, err)
	return resp, err
}

func (k *spyKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	r := opRequest(op)
	if err := k.s.before(&r); err != nil {
		return clientv3.OpResponse{}, err
	}
	resp, err := k.KV.Do(ctx, op)
	var rev int64
	switch {
	case err != nil:
	case resp.Get() != nil:
		rev = resp.Get().Header.Revision
	case resp.Txn() != nil:
		rev = resp.Txn().Header.Revision
	}
	k.s.answered(r, rev, err)
	return resp, err
}

func headerRev(resp *clientv3.GetResponse, err error) int64 {
	if err != nil || resp == nil || resp.Header == nil {
		return 0
	}
	return resp.Header.Revision
}

func (k *spyKV) Txn(ctx context.Context) clientv3.Txn {
	return &spyTxn{Txn: k.KV.Txn(ctx), s: k.s}
}

type spyTxn struct {
	clientv3.Txn
	s         *Spy
	cmps      []clientv3.Cmp
	then, els []clientv3.Op
}

func (t *spyTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	t.Txn = t.Txn.If(cs...)
	return t
}

func (t *spyTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.then = append(t.then, ops...)
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *spyTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.els = append(t.els, ops...)
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *spyTxn) Commit() (*clientv3.TxnResponse, error) {
	r := Request{Kind: KindTxn, Ops: txnAccesses(t.cmps, t.then, t.els, 1, false)}
	if err := t.s.before(&r); err != nil {
		return nil, err
	}
	resp, err := t.Txn.Commit()
	var rev int64
	if err == nil && resp.Header != nil {
		rev = resp.Header.Revision
	}
	t.s.answered(r, rev, err)
	return resp, err
}

type spyWatcher struct {
	clientv3.Watcher
	s *Spy
}

func (w *spyWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	w.s.Watches.Add(1)
	op := clientv3.OpGet(key, opts...)
	r := Request{Kind: KindWatch, Key: key, End: string(op.RangeBytes()), Rev: op.Rev()}
	w.s.hookMu.Lock()
	last := w.s.lastRead
	w.s.hookMu.Unlock()
	if err := w.s.before(&r); err != nil {
		// A watch has no error return: like a watch etcd cancelled, the
		// channel delivers the error once and closes.
		out := make(chan clientv3.WatchResponse, 1)
		out <- clientv3.WatchResponse{Canceled: true, CancelReason: err.Error()}
		close(out)
		return out
	}
	w.s.hookMu.Lock()
	w.s.watched = append(w.s.watched, WatchStart{N: r.N, Key: r.Key, End: r.End, Rev: r.Rev, LastRead: last})
	w.s.hookMu.Unlock()
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
	if err := l.s.before(&Request{Kind: KindGrant}); err != nil {
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
	if err := l.s.before(&Request{Kind: KindRevoke, Lease: id}); err != nil {
		return nil, err
	}
	return l.Lease.Revoke(ctx, id)
}

func (l *spyLease) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	if err := l.s.before(&Request{Kind: KindLeaseInfo, Lease: id}); err != nil {
		return nil, err
	}
	return l.Lease.TimeToLive(ctx, id, opts...)
}

func (l *spyLease) Leases(ctx context.Context) (*clientv3.LeaseLeasesResponse, error) {
	if err := l.s.before(&Request{Kind: KindLeaseInfo}); err != nil {
		return nil, err
	}
	return l.Lease.Leases(ctx)
}

func (l *spyLease) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	if err := l.s.before(&Request{Kind: KindKeepAlive, Lease: id}); err != nil {
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
	if err := l.s.before(&Request{Kind: KindKeepAlive, Lease: id}); err != nil {
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
