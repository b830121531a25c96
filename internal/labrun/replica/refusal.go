package replica

import (
	"context"
	"fmt"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// A refusal (the fault "refuse"): for RefuseFor from the request it hits,
// the replica's writes are refused at once, as etcd refuses a proposal
// when its apply has fallen too far behind its commits. The lab's code
// gets etcd's own error for it, "etcdserver: too many requests" (gRPC
// ResourceExhausted), which etcd's client hands straight back. Not
// Unavailable: the client retries an Unavailable read or lease grant by
// itself, every 25 ms up to 100 times, and that pace would stand in for
// the lab code's own. Reads and streams go through, as etcd serves them
// while it refuses proposals.
//
// While it lasts, the replica counts the writes of its lab code that it
// refuses, less those of the lab functions its program calls on a clock
// of its own (Conn.Clocked), and when it ends says how many in a note
// (history.OpRefusal): the rule on the request rate judges that. Reads
// are not counted: a worker that rereads on every change its watch
// brings is following the changes, not retrying.

// RefuseFor is how long a refusal lasts: a TTL, at least a second, so
// that a pace can be told from a burst.
func RefuseFor(ttl int) time.Duration { return max(time.Duration(ttl)*time.Second, time.Second) }

// refusedAfter is how long a refused request takes to come back: about
// a round trip to an etcd on this machine, since the answer is etcd's.
const refusedAfter = time.Millisecond

// refusal is a replica's refusal window and its count.
type refusal struct {
	mu    sync.Mutex
	from  time.Time
	until time.Time
	sent  int // the lab code's refused writes since from
}

// start opens the window at now for d; false when one is open already.
func (r *refusal) start(now time.Time, d time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Before(r.until) {
		return false
	}
	r.from, r.until, r.sent = now, now.Add(d), 0
	return true
}

// request counts one request of the lab's code at now (unless counted
// is false) and says whether the window is open.
func (r *refusal) request(now time.Time, counted bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Before(r.from) || !now.Before(r.until) {
		return false
	}
	if counted {
		r.sent++
	}
	return true
}

// total is the window's length and its count.
func (r *refusal) total() (time.Duration, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.until.Sub(r.from), r.sent
}

// proposal says whether etcd would make req a raft proposal, which it
// refuses while its apply lags: a put, a delete, a transaction that
// writes (etcd's own test: an op of either branch that is not a range),
// a lease's grant or revoke.
func proposal(req any) bool {
	switch r := req.(type) {
	case *pb.PutRequest, *pb.DeleteRangeRequest, *pb.LeaseGrantRequest, *pb.LeaseRevokeRequest:
		return true
	case *pb.TxnRequest:
		for _, op := range append(append([]*pb.RequestOp{}, r.Success...), r.Failure...) {
			if op.GetRequestRange() == nil {
				return true
			}
		}
	}
	return false
}

// startRefusal opens the replica's refusal and says when it ends.
func (f *faulter) startRefusal() {
	d := RefuseFor(f.ttl)
	if !f.refusal.start(time.Now(), d) {
		return
	}
	go func() {
		time.Sleep(d)
		took, n := f.refusal.total()
		f.conn.Emit(Event{Kind: "note", Value: took.Seconds(),
			Text:  fmt.Sprintf("etcd refused its writes for %.1f s; its code sent %d of them meanwhile (%.0f a second)", took.Seconds(), n, float64(n)/took.Seconds()),
			Facts: &Facts{Op: "refusal", Succeeded: true, Tries: n}})
	}()
}

// refuses says whether req, from s, is refused now: the refusal is open
// and req is a write. Each one refused is counted, but those of the
// clocked lab functions.
func (f *faulter) refuses(s Site, req any) bool {
	return proposal(req) && f.refusal.request(time.Now(), !f.conn.isClocked(s.Entry))
}

// refuse answers a refused request as etcd does, a round trip later.
func refuse() error {
	time.Sleep(refusedAfter)
	return rpctypes.ErrGRPCRequestTooManyRequests
}

// late sends a request HoldFor late in the background, as a request held
// in the network reaches etcd after the lease it was sent under ended:
// the caller waits for its answer or, as a gRPC call does, gives up when
// its context ends. Once it has given up, what etcd did with the request
// is still reported when it changed something (lateAnswer): the lab's
// own reports cannot say, its code was told the call failed.
func (f *faulter) late(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	done := make(chan error, 1)
	go func() {
		time.Sleep(HoldFor(f.ttl))
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		done <- invoker(lctx, method, req, reply, cc, opts...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// The reply is the caller's no more: a gRPC client drops its
		// answer once the call failed, so only this reads it.
		go func() {
			if err := <-done; err == nil {
				f.lateAnswer(reply)
			}
		}()
		return status.FromContextError(ctx.Err()).Err()
	}
}

// lateAnswer reports what etcd changed with a request whose caller had
// given up on it: the revision, as the lab's own reports give theirs
// (Facts.Changed), so that the checker knows whose request it was.
func (f *faulter) lateAnswer(reply any) {
	var a Reply
	switch r := reply.(type) {
	case *pb.PutResponse:
		a = Reply{Revision: r.GetHeader().GetRevision(), Put: true}
	case *pb.DeleteRangeResponse:
		a = Reply{Revision: r.GetHeader().GetRevision(), Deleted: r.Deleted}
	case *pb.TxnResponse:
		a = txnReply(r.GetHeader().GetRevision(), r.Responses)
	}
	if !a.Put && a.Deleted == 0 {
		return
	}
	text := fmt.Sprintf("a request its code had given up on reached etcd late all the same: etcd put a key at revision %d", a.Revision)
	if a.Deleted > 0 {
		text = fmt.Sprintf("a request its code had given up on reached etcd late all the same: etcd deleted %d key(s) at revision %d", a.Deleted, a.Revision)
	}
	f.conn.Emit(Event{Kind: "note", Text: text,
		Facts: &Facts{Op: "late", Revision: a.Revision, Deleted: a.Deleted, Succeeded: true, Changed: []int64{a.Revision}}})
}
