// Package textdiff compares two texts line by line (Myers' algorithm) and
// gives the result as unified-diff hunks, the way git diff shows them: a
// few lines of context around each change and "@@ -a,b +c,d @@" headers.
// The lab screen uses it to show a learner's file against the reference
// solution.
package textdiff

import (
	"fmt"
	"strings"
)

// Op is what happens to one line.
type Op int

// The operations of an edit script.
const (
	Equal  Op = iota // in both texts
	Delete           // only in the old text
	Insert           // only in the new text
)

// Line is one line of a diff.
type Line struct {
	Op   Op
	Text string // without its line break
	// NoNewline is set on the last line of a text that does not end in a
	// line break ("\ No newline at end of file").
	NoNewline bool
	// Old and New are the line's 1-based numbers in the old and the new
	// text; 0 where the line is not in that text.
	Old, New int
}

// Hunk is a run of changes with the unchanged lines around them.
type Hunk struct {
	// OldStart and OldLines are where the hunk is in the old text: its
	// first line (1-based) and how many lines it covers. When it covers
	// none, OldStart is the line after which the change goes (0 at the
	// top), as in diff -u. NewStart and NewLines are the same in the new
	// text.
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []Line
}

// Header is the hunk's "@@ -a,b +c,d @@" line; a count of one is left
// out, as diff -u and git do.
func (h Hunk) Header() string {
	return fmt.Sprintf("@@ -%s +%s @@", span(h.OldStart, h.OldLines), span(h.NewStart, h.NewLines))
}

func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// line is a text's line as compared: its content and whether a line break
// ended it (so "x" and "x\n" differ, as they do for diff).
type line struct {
	text  string
	ended bool
}

func split(s string) []line {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]line, len(parts))
	for i, p := range parts {
		t, ended := strings.CutSuffix(p, "\n")
		out[i] = line{text: t, ended: ended}
	}
	return out
}

// Lines is the whole edit script that turns old into new: every line of
// both texts, in order, deletions before insertions where they meet.
func Lines(old, new string) []Line {
	a, b := split(old), split(new)
	ops := script(a, b)
	out := make([]Line, 0, len(ops))
	i, j := 0, 0
	for _, op := range ops {
		switch op {
		case Equal:
			out = append(out, Line{Op: Equal, Text: a[i].text, NoNewline: !a[i].ended, Old: i + 1, New: j + 1})
			i++
			j++
		case Delete:
			out = append(out, Line{Op: Delete, Text: a[i].text, NoNewline: !a[i].ended, Old: i + 1})
			i++
		case Insert:
			out = append(out, Line{Op: Insert, Text: b[j].text, NoNewline: !b[j].ended, New: j + 1})
			j++
		}
	}
	return out
}

// Hunks groups the changes between old and new into hunks with context
// unchanged lines before and after each change (3 is diff -u's choice).
// Changes closer than twice the context share a hunk. Identical texts
// give no hunks.
func Hunks(old, new string, context int) []Hunk {
	if context < 0 {
		context = 0
	}
	all := Lines(old, new)
	var hunks []Hunk
	for i := 0; i < len(all); {
		if all[i].Op == Equal {
			i++
			continue
		}
		// A change at i: the hunk starts context lines earlier and runs
		// until a stretch of more than 2*context equal lines (or the end).
		start := max(i-context, 0)
		end := i
		for end < len(all) {
			if all[end].Op != Equal {
				end++
				continue
			}
			run := end
			for run < len(all) && all[run].Op == Equal {
				run++
			}
			if run == len(all) || run-end > 2*context {
				end = min(end+context, len(all))
				break
			}
			end = run
		}
		hunks = append(hunks, makeHunk(all, start, end))
		i = end
	}
	return hunks
}

// makeHunk is the hunk of all[start:end], numbered as diff -u numbers it.
func makeHunk(all []Line, start, end int) Hunk {
	h := Hunk{Lines: all[start:end]}
	// The lines before the hunk tell where it begins in each text.
	before := Line{}
	for k := start - 1; k >= 0; k-- {
		if all[k].Old > 0 && before.Old == 0 {
			before.Old = all[k].Old
		}
		if all[k].New > 0 && before.New == 0 {
			before.New = all[k].New
		}
		if before.Old > 0 && before.New > 0 {
			break
		}
	}
	for _, l := range h.Lines {
		if l.Op != Insert {
			h.OldLines++
		}
		if l.Op != Delete {
			h.NewLines++
		}
	}
	h.OldStart, h.NewStart = before.Old, before.New
	if h.OldLines > 0 {
		h.OldStart++
	}
	if h.NewLines > 0 {
		h.NewStart++
	}
	return h
}

// Unified is the diff of old and new as diff -u prints it, with oldName
// and newName on the "---" and "+++" lines; "" when the texts are equal.
func Unified(oldName, newName, old, new string, context int) string {
	hunks := Hunks(old, new, context)
	if len(hunks) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks {
		b.WriteString(h.Header() + "\n")
		for _, l := range h.Lines {
			b.WriteString(l.String() + "\n")
			if l.NoNewline {
				b.WriteString(NoNewlineMarker + "\n")
			}
		}
	}
	return b.String()
}

// NoNewlineMarker follows a line that ends its text without a line break.
const NoNewlineMarker = `\ No newline at end of file`

// String is the line with its diff -u prefix: space, "-" or "+".
func (l Line) String() string {
	switch l.Op {
	case Delete:
		return "-" + l.Text
	case Insert:
		return "+" + l.Text
	}
	return " " + l.Text
}

// script is a shortest edit script from a to b (Myers, "An O(ND)
// Difference Algorithm and Its Variations", 1986), after setting aside the
// common head and tail, which is most of a file in the usual case.
func script(a, b []line) []Op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops := make([]Op, 0, len(a)+len(b))
	for range head {
		ops = append(ops, Equal)
	}
	ops = append(ops, myers(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for range tail {
		ops = append(ops, Equal)
	}
	return ops
}

// maxEdits bounds the search: texts that differ in more lines than this
// (not a learner's file against its solution) are shown as one
// replacement, which is correct if not minimal, instead of costing
// memory in the square of the edits.
const maxEdits = 4000

// myers finds the furthest-reaching paths for each number of edits d,
// keeping each round's frontier to walk the path back afterwards.
func myers(a, b []line) []Op {
	n, m := len(a), len(b)
	if n == 0 || m == 0 || n+m > 2*maxEdits {
		return replace(n, m)
	}
	maxD := min(n+m, maxEdits)
	off := maxD + 1
	v := make([]int, 2*off+1) // v[off+k]: furthest x on diagonal k = x-y
	// trace[d] is v[off-d : off+d+1] as round d found it.
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down from diagonal k+1: an insertion
			} else {
				x = v[off+k-1] + 1 // right from diagonal k-1: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
				return backtrack(trace, n, m)
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	return replace(n, m)
}

// replace deletes all n old lines and inserts the m new ones.
func replace(n, m int) []Op {
	ops := make([]Op, 0, n+m)
	for range n {
		ops = append(ops, Delete)
	}
	for range m {
		ops = append(ops, Insert)
	}
	return ops
}

// backtrack walks from (n, m) back to (0, 0) through the frontiers the
// search kept and returns the edit script in order, deletions before
// insertions within each change.
func backtrack(trace [][]int, n, m int) []Op {
	at := func(d, k int) int { return trace[d][k+d] }
	var rev []Op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		k := x - y
		var prevK int
		if k == -d || (k != d && at(d-1, k-1) < at(d-1, k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(d-1, prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, Equal)
			x--
			y--
		}
		if x == prevX {
			rev = append(rev, Insert)
		} else {
			rev = append(rev, Delete)
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		rev = append(rev, Equal)
		x--
		y--
	}
	ops := make([]Op, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	// Within a change, any order of its deletions and insertions is a
	// valid script; deletions first reads best.
	for i := 0; i < len(ops); {
		if ops[i] == Equal {
			i++
			continue
		}
		j, dels := i, 0
		for j < len(ops) && ops[j] != Equal {
			if ops[j] == Delete {
				dels++
			}
			j++
		}
		for k := i; k < j; k++ {
			if k-i < dels {
				ops[k] = Delete
			} else {
				ops[k] = Insert
			}
		}
		i = j
	}
	return ops
}
