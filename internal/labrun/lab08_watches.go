package labrun

import "github.com/ownership-election/playground/internal/history"

// lab08OpLeftOpen is the Facts.Op of a herd08 replica's note that its
// code opened a watch while an earlier one, which had already delivered
// the delete it waited for, was still open (its context not ended).
const lab08OpLeftOpen = "watch-left-open"

// herdWatchesClosed: a waiter closes the watch that woke it before it
// opens the next. One left open stays registered on etcd, and etcd sends
// it every later change of its key, for as long as its context lives: a
// waiter woken five times holds five streams.
func herdWatchesClosed(f *history.Findings) history.Finding {
	for _, e := range f.Events {
		if e.Kind == history.Note && e.Facts != nil && e.Facts.Op == lab08OpLeftOpen {
			return breaks("watch-left-open", e.At, []string{e.Replica}, []history.Event{e},
				"%s's code opened a new watch while its watch on %s, which had already woken it, was still open: each wake-up leaves a stream on etcd until WaitTurn's context ends.", e.Replica, e.Facts.Key)
		}
	}
	return holds("Every waiter closed the watch that woke it before it opened another.")
}
