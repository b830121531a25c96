package main

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/labrun/replica"
)

// wakeSpy is a Watcher in front of the lab's code that reports every
// key's delete its watches deliver to it, once the code has taken the
// response from the channel: a wake-up. The checker reads which waiters
// one release woke (history.Herds): the lab's point is that it wakes
// only the one behind the released key, never the whole line.
type wakeSpy struct {
	clientv3.Watcher
	conn *replica.Conn
}

// Watch implements clientv3.Watcher: the responses go through a channel
// of the spy's own, without a buffer, so a response counts as delivered
// only when the lab's code received it.
func (s *wakeSpy) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := s.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			select {
			case out <- resp:
				s.woken(resp)
			case <-ctx.Done():
				// The code stopped listening; etcd's client closes in
				// once it sees ctx end.
				for range in {
				}
				return
			}
		}
	}()
	return out
}

// woken reports the first delete in a response the lab's code received:
// one receive is one wake-up, and the first delete is what woke it. A
// watch that was cut off gets, once back, every delete it missed in one
// response (a key name used again by the same lease is deleted once
// per place in line it had), of which the code acts on the first.
func (s *wakeSpy) woken(resp clientv3.WatchResponse) {
	for _, ev := range resp.Events {
		if ev.Type != mvccpb.DELETE || ev.Kv == nil {
			continue
		}
		key, rev := string(ev.Kv.Key), ev.Kv.ModRevision
		text := fmt.Sprintf("its code's watch delivered the delete of %s (revision %d)", key, rev)
		if n := len(resp.Events); n > 1 {
			text += fmt.Sprintf(", the first of %d events in one response", n)
		}
		s.conn.Emit(replica.Event{Kind: "note", Text: text,
			Facts: &replica.Facts{Op: "woken", Key: key, Revision: rev, Succeeded: true}}) // history.OpWoken
		return
	}
}
