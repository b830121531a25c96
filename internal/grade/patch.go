package grade

import (
	"fmt"
	"strings"
)

// A Patch is a small edit of a lab's reference solution that plants one
// learner's mistake (solutions/<id>/testdata/mutants/*.patch and
// bugs/*.patch). Its text format, readable as a before/after:
//
//	# One line: what the learner got wrong (required, first line).
//	@@ replace
//	<lines that must occur exactly once in the solution file>
//	@@ with
//	<replacement lines, possibly none (a deletion)>
//	@@ replace
//	...
//
// Lines are compared verbatim, leading tabs included. Hunks apply in
// order, each to the text the previous ones left. A hunk whose lines occur
// zero times or more than once makes the patch stale: the solution moved
// on and the patch must be rewritten, not guessed at.
type Patch struct {
	Name    string // file name, for messages
	Comment string // the first line without its "# "
	Hunks   []Hunk
}

// Hunk is one replacement: Old lines (at least one) become New ones.
type Hunk struct {
	Old, New []string
}

const (
	markReplace = "@@ replace"
	markWith    = "@@ with"
)

// ParsePatch reads a patch file's text; name is used in messages.
func ParsePatch(name string, text string) (*Patch, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1] // the final newline ends the last line
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "#") || strings.TrimSpace(strings.TrimPrefix(lines[0], "#")) == "" {
		return nil, fmt.Errorf("patch %s: the first line must be a comment (\"# what the learner got wrong\")", name)
	}
	p := &Patch{Name: name, Comment: strings.TrimSpace(strings.TrimPrefix(lines[0], "#"))}
	const (
		outside = iota
		inOld
		inNew
	)
	state := outside
	for i, l := range lines[1:] {
		lineNo := i + 2
		switch l {
		case markReplace:
			if state == inOld {
				return nil, fmt.Errorf("patch %s:%d: %q without a %q before it", name, lineNo, markReplace, markWith)
			}
			p.Hunks = append(p.Hunks, Hunk{})
			state = inOld
		case markWith:
			if state != inOld {
				return nil, fmt.Errorf("patch %s:%d: %q without a %q before it", name, lineNo, markWith, markReplace)
			}
			if len(p.Hunks[len(p.Hunks)-1].Old) == 0 {
				return nil, fmt.Errorf("patch %s:%d: hunk %d replaces no lines", name, lineNo, len(p.Hunks))
			}
			state = inNew
		default:
			switch state {
			case outside:
				if strings.TrimSpace(l) != "" {
					return nil, fmt.Errorf("patch %s:%d: text before the first %q (only the first line may be a comment)", name, lineNo, markReplace)
				}
			case inOld:
				h := &p.Hunks[len(p.Hunks)-1]
				h.Old = append(h.Old, l)
			case inNew:
				h := &p.Hunks[len(p.Hunks)-1]
				h.New = append(h.New, l)
			}
		}
	}
	if state == inOld {
		return nil, fmt.Errorf("patch %s: hunk %d has no %q part", name, len(p.Hunks), markWith)
	}
	if len(p.Hunks) == 0 {
		return nil, fmt.Errorf("patch %s: no %q hunk", name, markReplace)
	}
	return p, nil
}

// StaleError says which hunk of which patch no longer fits the solution.
type StaleError struct {
	Name    string
	Hunk    int // 1-based
	Matches int
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("stale patch %s: hunk %d matches %d times", e.Name, e.Hunk, e.Matches)
}

// Apply returns src with every hunk applied, or a *StaleError.
func (p *Patch) Apply(src string) (string, error) {
	lines := strings.Split(src, "\n")
	for i, h := range p.Hunks {
		var at []int
		for j := 0; j+len(h.Old) <= len(lines); j++ {
			if equalLines(lines[j:j+len(h.Old)], h.Old) {
				at = append(at, j)
			}
		}
		if len(at) != 1 {
			return "", &StaleError{Name: p.Name, Hunk: i + 1, Matches: len(at)}
		}
		j := at[0]
		next := make([]string, 0, len(lines)-len(h.Old)+len(h.New))
		next = append(next, lines[:j]...)
		next = append(next, h.New...)
		next = append(next, lines[j+len(h.Old):]...)
		lines = next
	}
	return strings.Join(lines, "\n"), nil
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Format writes p back in the patch text format.
func (p *Patch) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", p.Comment)
	for _, h := range p.Hunks {
		b.WriteString(markReplace + "\n")
		for _, l := range h.Old {
			b.WriteString(l + "\n")
		}
		b.WriteString(markWith + "\n")
		for _, l := range h.New {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
