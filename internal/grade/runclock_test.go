package grade

import (
	"testing"
	"time"
)

// TestRunClockCountsOnlyTheWaitForACPU: time spent sleeping or running
// counts; the longest any one thread waited in the run queue during an
// interval does not; waits from before the first sample (the build) and
// a wait longer than the interval (several threads' sums) cannot make the
// clock run backwards.
func TestRunClockCountsOnlyTheWaitForACPU(t *testing.T) {
	ms := func(n int) uint64 { return uint64(n) * uint64(time.Millisecond) }
	t0 := time.Unix(1000, 0)
	at := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Millisecond) }
	c := newRunClock(t0)
	steps := []struct {
		at    int
		waits map[int]uint64
		ran   time.Duration
	}{
		// Baseline: the build's 9 s of waiting is not the run's.
		{1000, map[int]uint64{1: ms(9000), 2: ms(50)}, time.Second},
		// Nobody waited: all of the second counts.
		{2000, map[int]uint64{1: ms(9000), 2: ms(50)}, 2 * time.Second},
		// Two threads waited 400 and 700 ms at once: 700 ms lost.
		{3000, map[int]uint64{1: ms(9400), 2: ms(750)}, 2300 * time.Millisecond},
		// A thread born in the interval waited 300 ms of it.
		{4000, map[int]uint64{1: ms(9400), 2: ms(750), 3: ms(300)}, 3 * time.Second},
		// Kept off the CPUs the whole second (and the sum of the
		// threads' waits is more than a second): the clock stands.
		{5000, map[int]uint64{1: ms(10400), 2: ms(1750), 3: ms(1300)}, 3 * time.Second},
		// A thread that ended takes its wait with it: no harm.
		{6000, map[int]uint64{1: ms(10400)}, 4 * time.Second},
	}
	for _, s := range steps {
		c.sample(at(s.at), s.waits)
		if c.ran() != s.ran {
			t.Fatalf("at %d ms: ran %v, want %v", s.at, c.ran(), s.ran)
		}
		if c.onClock() != time.Duration(s.at)*time.Millisecond {
			t.Fatalf("at %d ms: on the clock %v", s.at, c.onClock())
		}
	}
}

// TestRunClockWithoutWaitsIsTheWallClock: where the kernel reports no
// waits (nil samples), the clock is wall time.
func TestRunClockWithoutWaitsIsTheWallClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := newRunClock(t0)
	for i := 1; i <= 5; i++ {
		c.sample(t0.Add(time.Duration(i)*time.Second), nil)
	}
	if c.ran() != 5*time.Second {
		t.Fatalf("ran %v, want 5s", c.ran())
	}
}
