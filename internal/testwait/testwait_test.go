package testwait

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestForSeesAConditionThatBecomesTrue(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 5 {
			n.Add(1)
		}
	}()
	if !For(5*time.Second, func() bool { return n.Load() == 5 }) {
		t.Fatal("condition that became true was not seen")
	}
}

func TestForGivesUpOnAConditionThatStaysFalse(t *testing.T) {
	calls := 0
	if For(30*time.Millisecond, func() bool { calls++; return false }) {
		t.Fatal("a false condition reported true")
	}
	if calls < 2 {
		t.Fatalf("checked %d times, want it polled", calls)
	}
}

// fakeTB records a Fatal instead of stopping the test.
type fakeTB struct {
	testing.TB
	msg string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Fatal(args ...any) { f.msg = args[0].(string) }

func TestUntilFailsWithWhatItWaitedFor(t *testing.T) {
	f := &fakeTB{TB: t}
	Until(f, 20*time.Millisecond, "the prompt", func() bool { return false }, func() string { return "saw: nothing" })
	if !strings.Contains(f.msg, "for the prompt") || !strings.Contains(f.msg, "saw: nothing") {
		t.Fatalf("failure message %q", f.msg)
	}
}

func TestBufferIsSafeToReadWhileWritten(t *testing.T) {
	var b Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			b.Write([]byte("x"))
		}
	}()
	Until(t, 5*time.Second, "100 writes", func() bool { return len(b.String()) == 100 })
	<-done
}
