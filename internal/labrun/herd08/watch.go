package main

import (
	"context"
	"fmt"
	"sync"

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

	mu sync.Mutex
	// served are the watches that delivered a delete to the code (the
	// wake-up they were opened for), with their contexts: one still
	// live when the code opens its next watch was left open on etcd.
	served []servedWatch
}

// servedWatch is a watch that woke the code, and the context it was
// opened with (it stays registered on etcd until that ends).
type servedWatch struct {
	key string
	ctx context.Context
}

// opLeftOpen is the Facts.Op of the note that the code opened a watch
// while one that had already woken it was still open (internal/labrun's
// lab08OpLeftOpen).
const opLeftOpen = "watch-left-open"

// Watch implements clientv3.Watcher: the responses go through a channel
// of the spy's own, without a buffer, so a response counts as delivered
// only when the lab's code received it.
func (s *wakeSpy) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	s.leftOpen(key)
	in := s.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			select {
			case out <- resp:
				if s.woken(resp) {
					s.mu.Lock()
					s.served = append(s.served, servedWatch{key, ctx})
					s.mu.Unlock()
				}
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
func (s *wakeSpy) woken(resp clientv3.WatchResponse) bool {
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
		return true
	}
	return false
}

// leftOpen reports, as the code opens a watch on key, each of its
// earlier watches that already woke it and whose context has not ended:
// the code moved on to a new wait and left that stream on etcd (once
// each). A watch is done with once it delivered its wake-up; closing it
// is cancelling its context.
func (s *wakeSpy) leftOpen(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.served {
		if w.ctx.Err() != nil {
			continue // closed
		}
		s.conn.Emit(replica.Event{Kind: "note",
			Text:  fmt.Sprintf("its code opens a watch on %s while its watch on %s, which already woke it, is still open", key, w.key),
			Facts: &replica.Facts{Op: opLeftOpen, Key: w.key, Succeeded: true}})
	}
	s.served = nil
}
