package facts

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// createdWatcher wraps a client's Watcher so a test knows when each watch
// that code it cannot change (the concurrency package) opens has been set
// up on the server: before that moment a fault would hit the watch's
// set-up, not the waiting this package's tests are about. It asks etcd
// for the "created" notice and keeps it from the caller, who sees the
// responses it would have seen without the wrapper.
type createdWatcher struct {
	clientv3.Watcher
	created chan string // the key of each watch, once etcd has created it
}

// watchCreations installs a createdWatcher on cli.
func watchCreations(cli *clientv3.Client) *createdWatcher {
	w := &createdWatcher{Watcher: cli.Watcher, created: make(chan string, 64)}
	cli.Watcher = w
	return w
}

func (w *createdWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := w.Watcher.Watch(ctx, key, append(opts, clientv3.WithCreatedNotify())...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for wr := range in {
			if wr.Created && len(wr.Events) == 0 && wr.Err() == nil {
				w.created <- key
				continue
			}
			select {
			case out <- wr:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// waitCreated waits until a watch on key has been created on the server.
func (w *createdWatcher) waitCreated(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	for {
		select {
		case k := <-w.created:
			if k == key {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no watch on %q was created: %v", key, ctx.Err())
		}
	}
}
