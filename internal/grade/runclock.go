package grade

import (
	"time"
)

// The run clock. A test binary's timeout is there to stop an endless loop
// or a wait for something that never comes, not to fail a correct lab on
// a laptop that is compiling something else. So where the kernel says how
// long each thread waited for a CPU (Linux's schedstat), the grader's
// alarm counts the time the machine gave the grading: the time on the
// clock less the time the grading was kept off the CPUs. Sleeping and
// blocking count in full (a hang burns no CPU), and so does running; only
// waiting in the run queue behind other work does not.
//
// Which part of that wait was stolen from the grading's progress cannot
// be read exactly when several threads wait at once, so the clock takes
// the lower bound: in each interval, the longest wait of any one thread of
// the grading's process tree. A grading that never waits runs on wall
// time; one held off the CPUs for the whole interval does not age.
//
// The testing package's own alarm (-timeout) is wall time; the grader
// gives it hangFactor times the timeout, as the bound on a grading that a
// busy machine keeps waiting.

// hangFactor times the timeout is the most wall time a test binary runs
// when the run clock is in charge.
const hangFactor = 4

// clockTick is how often the run clock samples the grading's threads.
const clockTick = 200 * time.Millisecond

// runClock counts the time a grading had the machine.
type runClock struct {
	start, last time.Time
	stolen      time.Duration
	// waited is each thread's total wait for a CPU (ns) at the last
	// sample; nil before the first.
	waited map[int]uint64
}

func newRunClock(now time.Time) *runClock { return &runClock{start: now, last: now} }

// sample takes the threads' waits (thread id → total ns, as schedstat
// gives them) at now. The first sample only sets the baseline: what the
// threads waited before (the build) is not the run's.
func (c *runClock) sample(now time.Time, waited map[int]uint64) {
	interval := now.Sub(c.last)
	if c.waited != nil && interval > 0 {
		var longest uint64
		for id, w := range waited {
			before, seen := c.waited[id]
			switch {
			case !seen:
				// A thread born since the last sample waited all of
				// its wait inside this interval.
				longest = max(longest, w)
			case w > before:
				longest = max(longest, w-before)
			}
		}
		c.stolen += min(time.Duration(longest), interval)
	}
	c.waited, c.last = waited, now
}

// ran is how long the grading has had the machine, as of the last sample.
func (c *runClock) ran() time.Duration { return c.last.Sub(c.start) - c.stolen }

// onClock is how long the grading has run on the wall clock, as of the
// last sample.
func (c *runClock) onClock() time.Duration { return c.last.Sub(c.start) }

// runWatch is the alarm of one test binary's run.
type runWatch struct {
	done, finished chan struct{}
	// fired is set, and onClock is the wall time run, when the alarm
	// went off; read them after stop.
	fired   bool
	onClock time.Duration
}

// watchRun starts the alarm for the test binary that the process tree
// under pid runs: when its run clock passes timeout (or, where there is
// no run clock, its wall time passes timeout plus runSlack), it asks the
// test binaries for their stacks, waits quitGrace, and calls kill. With a
// run clock, hangFactor times timeout (plus runSlack) of wall time ends it
// too, however busy the machine.
func watchRun(pid int, timeout time.Duration, kill func()) *runWatch {
	w := &runWatch{done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		w.loop(pid, timeout, kill)
	}()
	return w
}

func (w *runWatch) loop(pid int, timeout time.Duration, kill func()) {
	measured := schedClock()
	bound, wallBound := timeout+runSlack, timeout+runSlack
	if measured {
		bound, wallBound = timeout, hangFactor*timeout+runSlack
	}
	clock := newRunClock(time.Now())
	tick := time.NewTicker(clockTick)
	defer tick.Stop()
	for {
		select {
		case <-w.done:
			return
		case now := <-tick.C:
			var waits map[int]uint64
			if measured {
				waits = treeWaits(pid)
			}
			clock.sample(now, waits)
			if clock.ran() < bound && clock.onClock() < wallBound {
				continue
			}
			w.fired, w.onClock = true, clock.onClock()
			if measured {
				quitTests(pid)
				select {
				case <-w.done:
					return
				case <-time.After(quitGrace):
				}
			}
			kill()
			return
		}
	}
}

// stop ends the watch (nil: none was started) and waits for it.
func (w *runWatch) stop() {
	if w == nil {
		return
	}
	close(w.done)
	<-w.finished
}

// rang says whether the alarm went off (false for nil: none started).
func (w *runWatch) rang() bool { return w != nil && w.fired }
