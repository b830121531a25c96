// Package spin is a fixture: a "learner's" renewal loop that never waits,
// and a method that locks a mutex it already holds.
package spin

import (
	"sync"
	"time"
)

// Lease is a stand-in for a lab's type.
type Lease struct {
	mu    sync.Mutex
	until time.Time
}

// Run waits for the next renewal by polling the clock: under synctest
// the clock never moves while it polls.
func (l *Lease) Run(done <-chan struct{}) {
	next := time.Now().Add(time.Second)
	for {
		select {
		case <-done:
			return
		default:
		}
		if !time.Now().Before(next) {
			next = next.Add(time.Second)
		}
	}
}

// Renew locks l.mu and then calls MayAct, which locks it again.
func (l *Lease) Renew() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.MayAct() {
		l.until = time.Now()
	}
}

// MayAct locks l.mu.
func (l *Lease) MayAct() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Now().Before(l.until)
}
