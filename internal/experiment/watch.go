package experiment

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/history"
)

// keyWatch records every change etcd makes under the run's prefix as a
// KeyChanged event: what etcd held at every revision, as etcd itself
// reported it, beside what the replicas believed.
type keyWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	seen   chan int64 // revisions reported, for drain
	last   int64      // the last revision reported; only the watch goroutine writes it
}

// startKeyWatch watches the run's prefix from just after revision rev.
func (run *Run) startKeyWatch(rev int64) {
	ctx, cancel := context.WithCancel(run.ctx)
	w := &keyWatch{cancel: cancel, done: make(chan struct{}), seen: make(chan int64, 1), last: rev}
	run.watch = w
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			run.watchFrom(ctx, w)
			if Sleep(ctx, 100*time.Millisecond) != nil {
				return
			}
		}
	}()
}

// watchFrom follows one watch until it ends (an error, or the admin
// client refused once auth is on: the next one reads with storeClient).
func (run *Run) watchFrom(ctx context.Context, w *keyWatch) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := run.storeClient().Watch(wctx, "", clientv3.WithPrefix(), clientv3.WithRev(w.last+1), clientv3.WithPrevKV())
	for resp := range ch {
		if resp.Err() != nil || resp.Canceled {
			return
		}
		for _, ev := range resp.Events {
			run.Emit(keyChanged(ev))
		}
		if n := len(resp.Events); n > 0 {
			w.last = resp.Events[n-1].Kv.ModRevision
			select {
			case <-w.seen:
			default:
			}
			w.seen <- w.last
		}
	}
}

// keyChanged turns a watch event into the history's KeyChanged event.
func keyChanged(ev *clientv3.Event) history.Event {
	kv := StoreKeyOf(ev.Kv)
	f := &history.Facts{Op: "put", Key: kv.Key, Revision: ev.Kv.ModRevision, Succeeded: true, Lease: kv.Lease}
	text := fmt.Sprintf("etcd: %s = %s (revision %d", kv.Key, shownValue(kv.Value), kv.ModRevision)
	if kv.Lease != 0 {
		text += fmt.Sprintf(", lease %x", kv.Lease)
	}
	text += ")"
	if ev.Type == mvccpb.DELETE {
		f.Op, f.Deleted = "delete", 1
		text = fmt.Sprintf("etcd: %s deleted (revision %d)", kv.Key, kv.ModRevision)
		if ev.PrevKv != nil {
			prev := StoreKeyOf(ev.PrevKv)
			f.Prev = []history.StoreKey{prev}
			text = fmt.Sprintf("etcd: %s deleted, it held %s (revision %d)", kv.Key, shownValue(prev.Value), kv.ModRevision)
		}
	}
	f.Held = &kv
	return history.Event{Kind: history.KeyChanged, Text: text, Facts: f}
}

// StoreKeyOf is a key as etcd answered it, as the history keeps it.
func StoreKeyOf(kv *mvccpb.KeyValue) history.StoreKey {
	return history.StoreKey{Key: string(kv.Key), Value: string(kv.Value), CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}
}

// stopKeyWatch lets the watch report up to etcd's current revision (for
// at most a second) and stops it, so the history holds every change the
// script made before the verdict.
func (run *Run) stopKeyWatch() {
	w := run.watch
	if w == nil {
		return
	}
	ctx, cancel := context.WithTimeout(run.ctx, time.Second) // a run stopped early does not wait
	defer cancel()
	if g, err := run.storeClient().Get(ctx, "", clientv3.WithPrefix(), clientv3.WithCountOnly()); err == nil {
		for reached := false; !reached; {
			select {
			case rev := <-w.seen:
				reached = rev >= g.Header.Revision
			case <-ctx.Done():
				reached = true
			}
		}
	}
	w.cancel()
	<-w.done
}

// shownValue is a key's value as a sentence shows it: an empty one
// (a member key's) is "" rather than nothing at all.
func shownValue(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
