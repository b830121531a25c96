package etcdharness

import (
	"fmt"
	"sync"
)

// Write is one attempt by a writer (a leader, a lock holder, a shard
// owner) to change a protected resource under a fencing token.
type Write struct {
	Resource string // what was written to: "register", "shard-3/offset"
	Writer   string // who wrote: a replica's name
	Token    int64  // the fencing token the writer presented
	Value    string
	Accepted bool // whether the resource (or the solution) said yes
}

// History records writes in the order they were accepted or rejected.
// Record must be called at the moment the outcome is known (under the
// resource's own lock where there is one), so that the order is real.
type History struct {
	mu     sync.Mutex
	writes []Write
}

// Record appends w.
func (h *History) Record(w Write) {
	h.mu.Lock()
	h.writes = append(h.writes, w)
	h.mu.Unlock()
}

// Writes returns a copy of everything recorded so far.
func (h *History) Writes() []Write {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Write(nil), h.writes...)
}

// Accepted returns the accepted writes by writer.
func (h *History) Accepted(writer string) int {
	n := 0
	for _, w := range h.Writes() {
		if w.Accepted && w.Writer == writer {
			n++
		}
	}
	return n
}

// CheckTokenOrder checks, for every resource, the two things fencing
// promises about the accepted writes, in the order they were accepted:
//
//   - tokens never go down: once a write with token T is accepted, no write
//     with a lower token is accepted after it (a stale owner was let in);
//   - a token belongs to one writer: two writers never both get writes
//     accepted under the same token (two owners were handed one token).
//
// Rejected writes are ignored: rejecting is what fencing is for. The error
// names the first offending pair.
func CheckTokenOrder(writes []Write) error {
	type last struct {
		token  int64
		writer string
		index  int
	}
	highest := map[string]last{}
	owner := map[string]map[int64]string{}
	for i, w := range writes {
		if !w.Accepted {
			continue
		}
		if h, ok := highest[w.Resource]; ok && w.Token < h.token {
			return fmt.Errorf("write #%d to %q by %s with token %d was accepted after write #%d by %s with the higher token %d: a stale owner got through",
				i, w.Resource, w.Writer, w.Token, h.index, h.writer, h.token)
		}
		byToken := owner[w.Resource]
		if byToken == nil {
			byToken = map[int64]string{}
			owner[w.Resource] = byToken
		}
		if o, ok := byToken[w.Token]; ok && o != w.Writer {
			return fmt.Errorf("write #%d to %q by %s used token %d, already used by %s: two owners shared one token",
				i, w.Resource, w.Writer, w.Token, o)
		}
		byToken[w.Token] = w.Writer
		highest[w.Resource] = last{w.Token, w.Writer, i}
	}
	return nil
}

// Register is a resource that enforces fencing itself, as the storage in
// lab 5.1 does: it accepts a write whose token is at least the highest it
// has accepted, rejects the rest, and records every attempt in History.
type Register struct {
	Name    string
	History *History

	mu      sync.Mutex
	highest int64
	value   string
}

// Write tries to store value under token and reports whether it was
// accepted.
func (r *Register) Write(writer string, token int64, value string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := token >= r.highest
	if ok {
		r.highest, r.value = token, value
	}
	if r.History != nil {
		r.History.Record(Write{Resource: r.Name, Writer: writer, Token: token, Value: value, Accepted: ok})
	}
	return ok
}

// Value returns the last accepted value and its token.
func (r *Register) Value() (string, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.value, r.highest
}
