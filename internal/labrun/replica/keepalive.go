package replica

import (
	"context"
	"fmt"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// DialTimeout is how long a replica's client waits to connect. etcd's
// client also derives from it how long it trusts a lease it has just
// begun to keep alive, before etcd has answered any keep-alive:
// FirstKeepAliveTrust.
const DialTimeout = 3 * time.Second

// FirstKeepAliveTrust is how long etcd's client (clientv3.NewLease:
// the dial timeout and a second) takes a lease to live from the call to
// KeepAlive until etcd first answers it, whatever the lease's TTL. Once
// etcd has answered, the client takes the lease to live a TTL from each
// answer it receives; it checks these deadlines once a second. A worker
// whose network is cut before etcd's first answer may therefore believe
// in a 2 s lease for 4 s, and the playground's checker allows it.
const FirstKeepAliveTrust = DialTimeout + time.Second

// keepAlives reports what a replica's client was told about its leases
// being kept alive, which is what the lab's code believes of them: the
// first KeepAlive call for each lease (the client's own deadline starts
// then), and every answer etcd sent to a keep-alive (a renewal, or that
// the lease is gone).
type keepAlives struct {
	conn *Conn

	mu      sync.Mutex
	started map[clientv3.LeaseID]bool
	ended   map[clientv3.LeaseID]bool // etcd said the lease is gone
}

// start reports the first KeepAlive call for id.
func (k *keepAlives) start(id clientv3.LeaseID) {
	k.mu.Lock()
	first := !k.started[id]
	k.started[id] = true
	k.mu.Unlock()
	if first {
		k.conn.Emit(Event{Kind: "note", Value: FirstKeepAliveTrust.Seconds(),
			Text:  fmt.Sprintf("keeping lease %x alive: trusted %.0f s until etcd first answers", int64(id), FirstKeepAliveTrust.Seconds()),
			Facts: &Facts{Op: "keepalive-start", Lease: int64(id), Succeeded: true}})
	}
}

// answered reports etcd's answer to one keep-alive.
func (k *keepAlives) answered(r *pb.LeaseKeepAliveResponse) {
	f := &Facts{Op: "keepalive", Revision: r.GetHeader().GetRevision(), Lease: r.ID, GrantedTTL: r.TTL, Succeeded: r.TTL > 0}
	if r.TTL <= 0 {
		// Keep-alives held up by a fault are all answered at once: the
		// first answer that the lease is gone is the one the client acts on.
		k.mu.Lock()
		said := k.ended[clientv3.LeaseID(r.ID)]
		k.ended[clientv3.LeaseID(r.ID)] = true
		k.mu.Unlock()
		if said {
			return
		}
		k.conn.Emit(Event{Kind: "lease-expired", Text: fmt.Sprintf("etcd answered a keep-alive of lease %x: it no longer knows that lease", r.ID), Facts: f})
		return
	}
	k.conn.Emit(Event{Kind: "lease-renewed", TTL: r.TTL, Text: fmt.Sprintf("etcd renewed lease %x: %d s again", r.ID, r.TTL), Facts: f})
}

// interceptor sees the answers on every keep-alive stream the client opens.
func (k *keepAlives) interceptor(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || method != pb.Lease_LeaseKeepAlive_FullMethodName {
		return s, err
	}
	return keepAliveStream{ClientStream: s, k: k}, nil
}

type keepAliveStream struct {
	grpc.ClientStream
	k *keepAlives
}

func (s keepAliveStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if r, ok := m.(*pb.LeaseKeepAliveResponse); ok && err == nil {
		s.k.answered(r)
	}
	return err
}
