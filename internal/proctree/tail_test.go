package proctree

import (
	"strings"
	"sync"
	"testing"
)

// TestTailKeepsTheLastBytes: what fits is kept whole; past Max only the
// last Max bytes stay, and every write reports all of p written.
func TestTailKeepsTheLastBytes(t *testing.T) {
	tail := NewTail(8)
	if n, err := tail.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := tail.String(); got != "abc" {
		t.Fatalf("kept %q, want abc", got)
	}
	if n, err := tail.Write([]byte("defghijkl")); n != 9 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := tail.String(); got != "efghijkl" {
		t.Fatalf("kept %q, want the last 8 bytes efghijkl", got)
	}
	if got := NewTail(8).String(); got != "" {
		t.Fatalf("an empty tail says %q", got)
	}
}

// TestTailTakesConcurrentWrites: exec copies stdout and stderr on
// goroutines of their own; under -race, writers at once are safe and the
// tail keeps whole writes' bytes only.
func TestTailTakesConcurrentWrites(t *testing.T) {
	tail := NewTail(64)
	var wg sync.WaitGroup
	for _, c := range "abcd" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				tail.Write([]byte(strings.Repeat(string(c), 4)))
			}
		}()
	}
	wg.Wait()
	got := tail.String()
	if len(got) != 64 {
		t.Fatalf("kept %d bytes, want 64", len(got))
	}
	for i := 0; i < len(got); i += 4 {
		if run := got[i : i+4]; strings.Count(run, run[:1]) != 4 {
			t.Fatalf("writes interleaved inside one another: %q", got)
		}
	}
}
