package etcdharness

import (
	"context"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Spy sits between a client and etcd and counts what the client asks for
// and what its watches deliver; it can also run the test's code in the
// middle of a call, to stage a pause at the worst moment. Attach it to a
// client before handing the client to the solution.
type Spy struct {
	// Counters, read them with Load.
	Gets      atomic.Int64 // range reads (Get, or Do with a get)
	Puts      atomic.Int64
	Deletes   atomic.Int64
	Txns      atomic.Int64 // committed transactions (attempts)
	Watches   atomic.Int64 // Watch calls
	WakeUps   atomic.Int64 // watch responses with at least one event, delivered
	Events    atomic.Int64 // events delivered, across all responses
	hookMu    sync.Mutex
	beforeGet func(key string)
	afterGet  func(key string)
	beforeTxn func()
}

// Attach wraps cli's KV and Watcher with a new Spy and returns it.
func Attach(cli *clientv3.Client) *Spy {
	s := &Spy{}
	cli.KV = &spyKV{KV: cli.KV, s: s}
	cli.Watcher = &spyWatcher{Watcher: cli.Watcher, s: s}
	return s
}

// Reads is Gets plus transactions: every request that can read state.
func (s *Spy) Reads() int64 { return s.Gets.Load() + s.Txns.Load() }

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

func (s *Spy) hooks() (bg, ag func(string), bt func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	return s.beforeGet, s.afterGet, s.beforeTxn
}

type spyKV struct {
	clientv3.KV
	s *Spy
}

func (k *spyKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.s.Gets.Add(1)
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
	return k.KV.Put(ctx, key, val, opts...)
}

func (k *spyKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	k.s.Deletes.Add(1)
	return k.KV.Delete(ctx, key, opts...)
}

func (k *spyKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	switch {
	case op.IsGet():
		k.s.Gets.Add(1)
		bg, ag, _ := k.s.hooks()
		if bg != nil {
			bg(string(op.KeyBytes()))
		}
		resp, err := k.KV.Do(ctx, op)
		if ag != nil {
			ag(string(op.KeyBytes()))
		}
		return resp, err
	case op.IsPut():
		k.s.Puts.Add(1)
	case op.IsDelete():
		k.s.Deletes.Add(1)
	case op.IsTxn():
		k.s.Txns.Add(1)
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
	s *Spy
}

func (t *spyTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *spyTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *spyTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *spyTxn) Commit() (*clientv3.TxnResponse, error) {
	t.s.Txns.Add(1)
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
