package labrun

import (
	"context"
	"slices"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// The stop's faults at a request: a replica must return when told to
// stop, whatever it was doing. A code that waits on etcd with no bound
// of its own (a resign or a revoke with context.Background()) returns
// only once etcd answers, so it is shown by a shutdown while its network
// is cut (sever: the cut is not healed before the run's stop); a code
// that waits on something the shutdown does not end (a Campaign on
// context.Background()) is shown by a stop while it waits, mid-run, as a
// rolling restart stops one process while the others go on (stop).
// Either way a process still running at the end of its grace is killed
// and reported with where its code stood (hung-on-stop).

// fireStop does a sever or a stop a replica's request reached.
func (lr *labRun) fireStop(p *labProc, f history.RequestFault, facts func() *history.Facts) {
	r := p.r
	if f.Fault == history.SeverAfter {
		r.Emit(history.Event{Kind: history.Note, Text: f.String() + ": its network stays cut until its process has ended, so it is told to stop while cut off", Facts: facts()})
		r.Partition(history.ByScript)
		done := r.Done()
		go func() {
			<-done
			r.Heal(history.ByScript)
		}()
		return
	}
	r.Emit(history.Event{Kind: history.Note, Text: f.String() + ": told to stop (SIGTERM: its Run's context is cancelled) while the others go on", Facts: facts()})
	lr.mu.Lock()
	lr.toldToStop = append(lr.toldToStop, r)
	lr.mu.Unlock()
	r.Cancel()
}

// awaitToldToStop waits for every replica a stop fault told to stop to
// end (returned, or killed once its grace was over), so that the run's
// own stop comes after; the others went on meanwhile.
func (lr *labRun) awaitToldToStop(ctx context.Context) error {
	lr.mu.Lock()
	rs := slices.Clone(lr.toldToStop)
	lr.mu.Unlock()
	limit := time.After(lr.grace() + 2*time.Second)
	for _, r := range rs {
		select {
		case <-r.Done():
		case <-limit:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
