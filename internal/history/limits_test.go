package history

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file larger than the limit is refused from its size alone: a sparse
// file of 600 MiB costs the test nothing, and Read nothing either.
func TestReadRefusesALargeFileByItsSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(600 << 20); err != nil {
		t.Fatal(err)
	}
	_, err = Read(f)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "600 MiB, more than the 64 MiB") {
		t.Fatalf("Read = %v, want ErrTooLarge naming the size and the limit", err)
	}
	if off, _ := f.Seek(0, io.SeekCurrent); off != 0 {
		t.Errorf("Read read %d bytes of a file it could refuse unread", off)
	}
}

// A stream (a pipe) that goes on past the limit is refused once the
// limit is reached.
func TestReadRefusesAStreamPastTheLimit(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"format":1,`), endless(' '))
	if _, err := Read(r); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "64 MiB") {
		t.Fatalf("Read = %v, want ErrTooLarge naming the limit", err)
	}
}

// Millions of tiny events (each decodes into a struct far larger than
// its bytes) are refused at MaxEvents.
func TestReadRefusesTooManyEvents(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"format":1,"events":[{}`), repeat(",{}", MaxEvents+1), strings.NewReader("]}"))
	if _, err := Read(r); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "events") {
		t.Fatalf("Read = %v, want ErrTooLarge for the events", err)
	}
}

// Empty objects nested in one event count against MaxObjects.
func TestReadRefusesTooManyObjects(t *testing.T) {
	var events []io.Reader
	for range 40 {
		events = append(events, strings.NewReader(`{"kind":"note","facts":{"prev":[{}`), repeat(",{}", 30_000), strings.NewReader("]}},"))
	}
	r := io.MultiReader(append(append([]io.Reader{strings.NewReader(`{"format":1,"events":[`)}, events...), strings.NewReader("{}]}"))...)
	if _, err := Read(r); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "objects") {
		t.Fatalf("Read = %v, want ErrTooLarge for the objects", err)
	}
}

// Every string a history file holds comes out without escape sequences
// and with control characters shown: event texts, replica names, facts.
func TestReadCleansStrings(t *testing.T) {
	in := `{"format":1,"scenario":"ttl-unlock-bug","error":"\u001b]0;title\u0007bad",
	  "events":[{"t":1,"kind":"note","replica":"r1\u001b[2J","text":"copy \u001b]52;c;aGk=\u0007this\r",
	  "facts":{"op":"put","key":"k\u001b[31m","held":{"key":"k","value":"v\u001bP1$r\u001b\\"}}}]}`
	h, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	e := h.Events[0]
	got := []string{h.Error, e.Replica, e.Text, e.Facts.Key, e.Facts.Held.Value}
	want := []string{"bad", "r1", "copy this␍", "k", "v"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("string %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// The history in testdata, recorded by a real run, reads as before.
func TestReadKeepsARealHistory(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "ttl-unlock-bug-b31819c.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil || len(h.Events) == 0 || h.Verdict == nil || h.Scenario == "" {
		t.Fatalf("Read = %d events, verdict %v, scenario %q, %v", len(h.Events), h.Verdict != nil, h.Scenario, err)
	}
}

type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

func repeat(s string, n int) io.Reader { return strings.NewReader(strings.Repeat(s, n)) }
