package replica

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Faults at streams: a Watch or a LeaseKeepAlive. etcd's client opens
// the gRPC stream under them from its own goroutines, and shares one
// stream between the watches of a context, so a gRPC stream interceptor
// never sees the learner's line that asked; the harness therefore puts
// its stream faults on the Watcher and the Lease of the client it hands
// the learner's code (still the harness, never the learner's file),
// where the call's stack holds the lab's frame. A stream's call site is
// that frame and the RPC ("Watch", "LeaseKeepAlive"); its Occurrence is
// the n-th stream opened from the site in the role. The kinds, for a
// stream:
//
//   - fail: the stream fails as it opens (a watch answers once with
//     Canceled and closes; a keep-alive channel closes and the client
//     stops renewing, so the lease runs out a TTL later);
//   - lose: its first event (or renewal answer) is dropped, never seen
//     by the lab's code;
//   - hold: its first event (or answer) is held for HoldFor and then
//     delivered, the ones behind it waiting their turn;
//   - pause, cut, leader: done from outside right after its first event
//     (or answer), before the lab's code sees it.

// StreamWatch and StreamKeepAlive are the stream RPCs' names in a site.
const (
	StreamWatch     = "Watch"
	StreamKeepAlive = "LeaseKeepAlive"
)

// faultWatcher puts the stream faults on the client's watches.
type faultWatcher struct {
	clientv3.Watcher
	f *faulter
}

// Watch implements clientv3.Watcher.
func (w faultWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	s, ok := callSite()
	if !ok || ctx.Err() != nil {
		return w.Watcher.Watch(ctx, key, opts...)
	}
	s.RPC = StreamWatch
	role := w.f.conn.Role()
	a := w.f.count(s, role)
	if a == nil {
		return w.Watcher.Watch(ctx, key, opts...)
	}
	if a.Fault == "fail" {
		if !w.f.claim(a, s, role, a.Occurrence) {
			return w.Watcher.Watch(ctx, key, opts...)
		}
		out := make(chan clientv3.WatchResponse, 1)
		// Canceled makes the answer's Err() say the watch ended, as a
		// watch etcd refused does.
		out <- clientv3.WatchResponse{Canceled: true}
		close(out)
		return out
	}
	in := w.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go relay(ctx, in, out, func(r clientv3.WatchResponse) bool { return len(r.Events) > 0 },
		func() bool { return w.f.claim(a, s, role, a.Occurrence) }, a.Fault, w.f.ttl)
	return out
}

// faultLease puts the stream faults on the client's keep-alives.
type faultLease struct {
	clientv3.Lease
	f *faulter
}

// KeepAlive implements clientv3.Lease.
func (l faultLease) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	s, ok := callSite()
	if !ok || ctx.Err() != nil {
		return l.Lease.KeepAlive(ctx, id)
	}
	s.RPC = StreamKeepAlive
	role := l.f.conn.Role()
	a := l.f.count(s, role)
	if a == nil {
		return l.Lease.KeepAlive(ctx, id)
	}
	if a.Fault == "fail" {
		if !l.f.claim(a, s, role, a.Occurrence) {
			return l.Lease.KeepAlive(ctx, id)
		}
		// The stream breaks at once: the client is told, as when a
		// keep-alive's context ends, by its channel closing, and sends
		// no renewal for the lease.
		dead, cancel := context.WithCancel(ctx)
		cancel()
		return l.Lease.KeepAlive(dead, id)
	}
	in, err := l.Lease.KeepAlive(ctx, id)
	if err != nil {
		return in, err
	}
	out := make(chan *clientv3.LeaseKeepAliveResponse, 16)
	go relay(ctx, in, out, func(r *clientv3.LeaseKeepAliveResponse) bool { return r != nil },
		func() bool { return l.f.claim(a, s, role, a.Occurrence) }, a.Fault, l.f.ttl)
	return out, nil
}

// relay passes a stream's answers on from in to out, doing fault to the
// first one that counts (first), and closes out when in closes. Once
// ctx ends it drops what is left (etcd's client closes in then).
func relay[T any](ctx context.Context, in <-chan T, out chan<- T, first func(T) bool, claim func() bool, fault string, ttl int) {
	defer close(out)
	done := false
	for r := range in {
		if !done && first(r) {
			done = true
			if claim() {
				switch fault {
				case "lose":
					continue
				case "hold":
					select {
					case <-time.After(HoldFor(ttl)):
					case <-ctx.Done():
					}
				}
				// pause, cut, leader: done from outside while claim
				// waited, before the lab's code reads the answer.
			}
		}
		select {
		case out <- r:
		case <-ctx.Done():
			for range in {
			}
			return
		}
	}
}
