package scenario

import (
	"sync/atomic"
	"time"
)

// A scenario is a timed demonstration: a 2 s lease, renewals every
// 0.67 s, a pause of 1.5 s. When the machine stops this process for a
// good part of a second (two busy loops and another package's -race
// tests on two cores do), the run no longer shows what the scenario
// times, and judging it would judge the machine. stallWatch measures
// that from inside the process that runs etcd and the replicas: how late
// a short ticker fired at worst. A run during which it stalled for
// stallLimit or more is run again (attempts times at most); the run that
// is judged is the first one that did not stall, or the last.
const (
	stallTick  = 20 * time.Millisecond
	stallLimit = 300 * time.Millisecond
	attempts   = 3
)

type stallWatch struct {
	worst atomic.Int64 // nanoseconds
	stop  chan struct{}
	done  chan struct{}
}

func watchStalls() *stallWatch {
	w := &stallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		last := time.Now()
		tick := time.NewTicker(stallTick)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				// The time it is read, not the tick's own: a goroutine
				// that waits for a core is late as much as a timer.
				now := time.Now()
				if late := now.Sub(last) - stallTick; late > time.Duration(w.worst.Load()) {
					w.worst.Store(int64(late))
				}
				last = now
			}
		}
	}()
	return w
}

// end stops the watch and returns the worst stall it saw.
func (w *stallWatch) end() time.Duration {
	close(w.stop)
	<-w.done
	return time.Duration(w.worst.Load())
}

// untilSteady runs run up to attempts times, until one attempt sees no
// stall of stallLimit or more; it returns the worst stall of the last
// attempt and how many were made.
func untilSteady(run func()) (worst time.Duration, made int) {
	for made < attempts {
		w := watchStalls()
		run()
		made++
		if worst = w.end(); worst < stallLimit {
			break
		}
	}
	return worst, made
}
