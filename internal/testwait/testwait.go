// Package testwait is the one way tests wait: for a condition, checked
// every few milliseconds until a generous deadline, never for a fixed
// sleep. A test that waits on a sleep passes when the thing it waits for
// never happens and fails on a slow machine; one that waits on a
// condition does neither.
package testwait

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// Poll is how often Until checks its condition.
const Poll = 10 * time.Millisecond

// Until checks cond until it returns true, and fails t (stopping the
// test) when it has not within d; what says what was awaited, and
// describe, when not nil, adds what was seen last to the failure.
func Until(t testing.TB, d time.Duration, what string, cond func() bool, describe ...func() string) {
	t.Helper()
	if For(d, cond) {
		return
	}
	msg := "waited " + d.String() + " for " + what
	for _, f := range describe {
		msg += "\n" + f()
	}
	t.Fatal(msg)
}

// For checks cond until it returns true or d has passed, and reports
// whether it did: for a test that has more to say on failure than Until
// can.
func For(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(Poll)
	}
}

// Buffer is a bytes.Buffer safe to write from the code under test while
// the test reads it, for output a test waits on.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
