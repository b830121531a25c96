package replica

import (
	"context"
	"sync"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Spy is a KV that keeps what etcd answered to the requests sent through
// it: the revision of each answer and whether it put or deleted keys.
// A replica puts one in front of the lab's code so that its events can
// say at which revision the learner's Acquire wrote the lock or its
// Release deleted one, which the playground matches with its own watch
// of the keys (etcd's truth), whatever the order the two reach it in.
type Spy struct {
	clientv3.KV

	mu   sync.Mutex
	sent []Reply
}

// Reply is what etcd said to one request the lab's code sent.
type Reply struct {
	Revision int64 // the answer's header revision
	Put      bool  // it put a key (at Revision)
	Deleted  int64 // how many keys it deleted (at Revision)
}

// NewSpy wraps kv.
func NewSpy(kv clientv3.KV) *Spy { return &Spy{KV: kv} }

// Take returns the answers since the last Take and forgets them.
func (s *Spy) Take() []Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sent
	s.sent = nil
	return out
}

func (s *Spy) keep(a Reply) {
	s.mu.Lock()
	s.sent = append(s.sent, a)
	s.mu.Unlock()
}

// Put implements clientv3.KV.
func (s *Spy) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	r, err := s.KV.Put(ctx, key, val, opts...)
	if err == nil {
		s.keep(Reply{Revision: r.Header.Revision, Put: true})
	}
	return r, err
}

// Get implements clientv3.KV.
func (s *Spy) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	r, err := s.KV.Get(ctx, key, opts...)
	if err == nil {
		s.keep(Reply{Revision: r.Header.Revision})
	}
	return r, err
}

// Delete implements clientv3.KV.
func (s *Spy) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	r, err := s.KV.Delete(ctx, key, opts...)
	if err == nil {
		s.keep(Reply{Revision: r.Header.Revision, Deleted: r.Deleted})
	}
	return r, err
}

// Do implements clientv3.KV.
func (s *Spy) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	r, err := s.KV.Do(ctx, op)
	if err != nil {
		return r, err
	}
	switch {
	case r.Put() != nil:
		s.keep(Reply{Revision: r.Put().Header.Revision, Put: true})
	case r.Del() != nil:
		s.keep(Reply{Revision: r.Del().Header.Revision, Deleted: r.Del().Deleted})
	case r.Get() != nil:
		s.keep(Reply{Revision: r.Get().Header.Revision})
	case r.Txn() != nil:
		s.keep(txnReply(r.Txn().Header.Revision, r.Txn().Responses))
	}
	return r, err
}

// Txn implements clientv3.KV.
func (s *Spy) Txn(ctx context.Context) clientv3.Txn { return &spyTxn{Txn: s.KV.Txn(ctx), s: s} }

type spyTxn struct {
	clientv3.Txn
	s *Spy
}

func (t *spyTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.Txn = t.Txn.If(cs...)
	return t
}

func (t *spyTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *spyTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *spyTxn) Commit() (*clientv3.TxnResponse, error) {
	r, err := t.Txn.Commit()
	if err == nil {
		t.s.keep(txnReply(r.Header.Revision, r.Responses))
	}
	return r, err
}

// txnReply reads what a transaction's branch did, nested ones included:
// every write of a transaction is at its header's revision.
func txnReply(rev int64, ops []*pb.ResponseOp) Reply {
	a := Reply{Revision: rev}
	for _, op := range ops {
		switch {
		case op.GetResponsePut() != nil:
			a.Put = true
		case op.GetResponseDeleteRange() != nil:
			a.Deleted += op.GetResponseDeleteRange().Deleted
		case op.GetResponseTxn() != nil:
			in := txnReply(rev, op.GetResponseTxn().Responses)
			a.Put = a.Put || in.Put
			a.Deleted += in.Deleted
		}
	}
	return a
}

// Wrote is the revision of the last answer that put a key, or 0.
func Wrote(as []Reply) int64 {
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Put {
			return as[i].Revision
		}
	}
	return 0
}

// DeletedAt is the revision of the last answer that deleted keys, and
// how many, or 0, 0.
func DeletedAt(as []Reply) (int64, int64) {
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Deleted > 0 {
			return as[i].Revision, as[i].Deleted
		}
	}
	return 0, 0
}

// Last is the revision of the last answer, or 0.
func Last(as []Reply) int64 {
	if len(as) == 0 {
		return 0
	}
	return as[len(as)-1].Revision
}
