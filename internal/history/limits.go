package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// The limits a history file is read under. The longest run the course
// records writes a few MiB (a lab run under exploration, every renewal
// kept); these leave room for runs many times longer, and keep a file
// made to exhaust the reader (hundreds of MiB, or millions of empty
// objects that decode into large structs) from costing more than a few
// hundred MiB of memory.
const (
	// MaxFileBytes is the largest history file Read takes.
	MaxFileBytes = 64 << 20
	// MaxEvents is the most events a history may hold.
	MaxEvents = 250_000
	// MaxObjects is the most JSON objects the file may hold in all.
	MaxObjects = 1 << 20
	// maxFieldBytes bounds each top-level value other than the events
	// (the verdict, the parameters): they are decoded whole.
	maxFieldBytes = 4 << 20
)

// ErrTooLarge is returned by Read for a history over one of its limits.
var ErrTooLarge = errors.New("history: file too large")

func tooLarge(size int64) error {
	if size > 0 {
		return fmt.Errorf("%w: %s, more than the %s a history may be", ErrTooLarge, mib(size), mib(MaxFileBytes))
	}
	return fmt.Errorf("%w: more than the %s a history may be", ErrTooLarge, mib(MaxFileBytes))
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", (n+(1<<20)-1)>>20) }

// checkSize refuses a file whose size is known to be over the limit
// (an *os.File of a regular file), before reading any of it.
func checkSize(r io.Reader) error {
	st, ok := r.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil
	}
	if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxFileBytes {
		return tooLarge(fi.Size())
	}
	return nil
}

// cappedReader reads at most left bytes; over is set once the reader
// had more, and reading stops there.
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.over = true
		return 0, ErrTooLarge
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.left)])
	c.left -= int64(n)
	if c.left <= 0 {
		c.over = true
		return n, ErrTooLarge
	}
	return n, err
}

// decodeHistory reads one History document from dec, its events one at
// a time and everything else as it is (bounded by maxFieldBytes).
func decodeHistory(dec *json.Decoder) (History, error) {
	var h History
	if err := wantDelim(dec, '{'); err != nil {
		return h, err
	}
	fields := map[string]json.RawMessage{}
	objects := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h, err
		}
		key, _ := t.(string)
		if strings.EqualFold(key, "events") {
			if h.Events, err = decodeEvents(dec, &objects); err != nil {
				return h, err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return h, err
		}
		if len(raw) > maxFieldBytes {
			return h, fmt.Errorf("%w: its %q is more than %s", ErrTooLarge, key, mib(maxFieldBytes))
		}
		if objects += bytes.Count(raw, []byte("{")); objects > MaxObjects {
			return h, fmt.Errorf("%w: more than %d objects", ErrTooLarge, MaxObjects)
		}
		fields[key] = raw
	}
	if err := wantDelim(dec, '}'); err != nil {
		return h, err
	}
	events := h.Events
	rest, err := json.Marshal(fields)
	if err == nil {
		err = json.Unmarshal(rest, &h)
	}
	h.Events = events
	return h, err
}

// decodeEvents reads the events list (or null), counting its objects
// against MaxObjects.
func decodeEvents(dec *json.Decoder, objects *int) ([]Event, error) {
	t, err := dec.Token()
	if err != nil || t == nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("events: want a list, found %v", t)
	}
	var out []Event
	for dec.More() {
		if len(out) == MaxEvents {
			return nil, fmt.Errorf("%w: more than %d events", ErrTooLarge, MaxEvents)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if *objects += bytes.Count(raw, []byte("{")); *objects > MaxObjects {
			return nil, fmt.Errorf("%w: more than %d objects", ErrTooLarge, MaxObjects)
		}
		var e Event
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, wantDelim(dec, ']')
}

func wantDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", string(want), t)
	}
	return nil
}
