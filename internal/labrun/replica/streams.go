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
// that frame and the RPC ("Watch", "LeaseKeepAlive").
//
// A stream lives on while its replica's role changes: a keep-alive
// opened while a candidate waited renews the lease of the leader it
// became, and that leader sends no other request while it works. So a
// stream is reached, and hit, in the role its replica is in when each
// answer arrives, not only in the one it was opened in: its answers
// count per role (the n-th answer from the site in the role), and
// "reached" is said for each role that gets one. The kinds:
//
//   - fail: in the role it is opened in, the stream fails as it opens
//     (a watch answers once with Canceled and closes; a keep-alive
//     channel closes and the client stops renewing, so the lease runs out
//     a TTL later); in a later role, it fails at its first answer there,
//     the same way (the leader's keep-alives end while it works);
//   - hold: in the role it is opened in, the stream is opened a TTL and a
//     second late, as a request held in the network is sent late (a
//     watch from "now" then begins after whatever changed meanwhile; a
//     keep-alive sent late lets the lease run out); in a later role, its
//     first answer there is held that long;
//   - lose: its first answer in the role is dropped, never seen by the
//     lab's code;
//   - pause, cut, leader, sever, stop, revoke: done from outside right
//     after its first answer in the role, before the lab's code sees it
//     (revoke: its lease ended at etcd, the process running on);
//   - refuse: from its first answer in the role, the replica's writes
//     are refused for a while (refusal.go).

// StreamWatch and StreamKeepAlive are the stream RPCs' names in a site.
const (
	StreamWatch     = "Watch"
	StreamKeepAlive = "LeaseKeepAlive"
)

// atOpen is the fault armed at the opening of a stream from s in role
// (fail or hold in the role it is opened in), claimed, if any.
func (f *faulter) atOpen(s Site, role string) string {
	a := f.tally(f.counts, s, role, func(a *Armed) bool { return a.Fault == "fail" || a.Fault == "hold" })
	if a == nil || !f.claim(a, s, role, a.Occurrence) {
		return ""
	}
	return a.Fault
}

// atAnswer is what counts a stream's answers: each one, in the role its
// replica is in then, and the fault armed at it, claimed ("" for none).
// A fail or a hold in the role the stream was opened in belongs to its
// opening.
func (f *faulter) atAnswer(s Site, opened string) func() string {
	return func() string {
		role := f.conn.Role()
		a := f.tally(f.answers, s, role, func(a *Armed) bool {
			return role != opened || (a.Fault != "fail" && a.Fault != "hold")
		})
		if a == nil || !f.claim(a, s, role, a.Occurrence) {
			return ""
		}
		return a.Fault
	}
}

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
	canceled := func() (clientv3.WatchResponse, bool) {
		// Canceled makes the answer's Err() say the watch ended, as a
		// watch etcd refused does.
		return clientv3.WatchResponse{Canceled: true}, true
	}
	fault := w.f.atOpen(s, role)
	if fault == "fail" {
		out := make(chan clientv3.WatchResponse, 1)
		out <- clientv3.WatchResponse{Canceled: true}
		close(out)
		return out
	}
	out := make(chan clientv3.WatchResponse)
	ictx, stop := context.WithCancel(ctx)
	go func() {
		defer stop()
		if fault == "hold" && !sleepCtx(ctx, HoldFor(w.f.ttl)) {
			close(out)
			return
		}
		in := w.Watcher.Watch(ictx, key, opts...)
		relay(ctx, in, out, func(r clientv3.WatchResponse) bool { return len(r.Events) > 0 },
			w.f.atAnswer(s, role), canceled, stop, w.f.ttl)
	}()
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
	closed := func() (*clientv3.LeaseKeepAliveResponse, bool) { return nil, false }
	switch l.f.atOpen(s, role) {
	case "fail":
		// The stream breaks at once: the client is told, as when a
		// keep-alive's context ends, by its channel closing, and sends
		// no renewal for the lease.
		dead, cancel := context.WithCancel(ctx)
		cancel()
		return l.Lease.KeepAlive(dead, id)
	case "hold":
		out := make(chan *clientv3.LeaseKeepAliveResponse, 16)
		go func() {
			if !sleepCtx(ctx, HoldFor(l.f.ttl)) {
				close(out)
				return
			}
			ictx, stop := context.WithCancel(ctx)
			defer stop()
			in, err := l.Lease.KeepAlive(ictx, id)
			if err != nil {
				close(out)
				return
			}
			relay(ctx, in, out, notNil, l.f.atAnswer(s, role), closed, stop, l.f.ttl)
		}()
		return out, nil
	}
	ictx, stop := context.WithCancel(ctx)
	in, err := l.Lease.KeepAlive(ictx, id)
	if err != nil {
		stop()
		return in, err
	}
	out := make(chan *clientv3.LeaseKeepAliveResponse, 16)
	go func() {
		defer stop()
		relay(ctx, in, out, notNil, l.f.atAnswer(s, role), closed, stop, l.f.ttl)
	}()
	return out, nil
}

func notNil(r *clientv3.LeaseKeepAliveResponse) bool { return r != nil }

// sleepCtx waits d, or less if ctx ends first: whether it waited d.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// relay passes a stream's answers on from in to out and closes out when
// in closes. Each answer that counts asks fault what it meets: lose
// drops it, hold holds it for HoldFor, fail ends the stream there (stop
// ends the stream beneath, and ending, when it has one, is the last
// answer out), and pause, cut, leader, revoke or refuse were done while
// the fault was claimed, before the lab's code reads the answer. Once ctx
// ends it drops what is left (etcd's client closes in then).
func relay[T any](ctx context.Context, in <-chan T, out chan<- T, counts func(T) bool, fault func() string, ending func() (T, bool), stop func(), ttl int) {
	defer close(out)
	drain := func() {
		for range in {
		}
	}
	for r := range in {
		if counts(r) {
			switch fault() {
			case "lose":
				continue
			case "hold":
				sleepCtx(ctx, HoldFor(ttl))
			case "fail":
				stop()
				if last, ok := ending(); ok {
					select {
					case out <- last:
					case <-ctx.Done():
					}
				}
				drain()
				return
			}
		}
		select {
		case out <- r:
		case <-ctx.Done():
			drain()
			return
		}
	}
}
