package grade

import (
	"fmt"
	"unicode/utf8"
)

// Bounds on what grading keeps of a test's output, so that a learner's
// code printing without end (a debug line in a hot loop) cannot exhaust
// memory: the display shows a few dozen lines anyway. Every line is cut
// to maxLineLen bytes; of each block of lines (one test's output, the
// package's output, the compiler's) the first headLines and the last
// tailLines are kept, with a note saying how many were left out between.
const (
	headLines  = 150
	tailLines  = 150
	maxLineLen = 2000
)

// clip cuts a line to maxLineLen bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= maxLineLen {
		return s
	}
	cut := maxLineLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … (%d more bytes)", len(s)-cut)
}

// lineBuf keeps the head and the tail of a stream of lines.
type lineBuf struct {
	head    []string
	tail    []string // a ring once full
	next    int      // where the next tail line goes once the ring is full
	dropped int
}

func (b *lineBuf) add(s string) {
	s = clip(s)
	if len(b.head) < headLines {
		b.head = append(b.head, s)
		return
	}
	if len(b.tail) < tailLines {
		b.tail = append(b.tail, s)
		return
	}
	b.tail[b.next] = s
	b.next = (b.next + 1) % tailLines
	b.dropped++
}

// insert puts s at index i of the lines kept so far when that is still in
// the head (nothing dropped yet before it); otherwise it appends s.
func (b *lineBuf) insert(i int, s string) {
	if i < 0 || i >= len(b.head) || len(b.tail) > 0 {
		b.add(s)
		return
	}
	s = clip(s)
	if len(b.head) == headLines {
		// The head is full: its last line moves to the tail.
		last := b.head[len(b.head)-1]
		copy(b.head[i+1:], b.head[i:len(b.head)-1])
		b.head[i] = s
		b.add(last)
		return
	}
	b.head = append(b.head, "")
	copy(b.head[i+1:], b.head[i:])
	b.head[i] = s
}

// len is how many lines are kept before the tail starts (what insert
// indexes).
func (b *lineBuf) len() int { return len(b.head) + len(b.tail) }

// lines returns the kept lines in order, with a note where some were
// left out. It returns nil when nothing was added.
func (b *lineBuf) lines() []string {
	if len(b.head) == 0 {
		return nil
	}
	out := make([]string, 0, len(b.head)+len(b.tail)+1)
	out = append(out, b.head...)
	if b.dropped > 0 {
		out = append(out, fmt.Sprintf("… (%d lines of output not kept) …", b.dropped))
	}
	out = append(out, b.tail[b.next:]...)
	out = append(out, b.tail[:b.next]...)
	return out
}

// byteBuf is an io.Writer that keeps the first and the last byteBufHalf bytes
// written to it (standard error of the go command).
type byteBuf struct {
	head, tail []byte
	dropped    int
}

const byteBufHalf = 64 << 10

func (b *byteBuf) Write(p []byte) (int, error) {
	n := len(p)
	if room := byteBufHalf - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		b.tail = append(b.tail, p...)
		// Trim only when twice the bound, so the copying is amortized.
		if over := len(b.tail) - byteBufHalf; over > byteBufHalf {
			b.dropped += over
			b.tail = append(b.tail[:0], b.tail[over:]...)
		}
	}
	return n, nil
}

func (b *byteBuf) String() string {
	tail, dropped := b.tail, b.dropped
	if over := len(tail) - byteBufHalf; over > 0 {
		tail, dropped = tail[over:], dropped+over
	}
	if dropped == 0 {
		return string(b.head) + string(tail)
	}
	return string(b.head) + fmt.Sprintf("\n… (%d bytes not kept) …\n", dropped) + string(tail)
}
