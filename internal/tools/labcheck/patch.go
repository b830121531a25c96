package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A patch is a small edit of a lab's reference solution that plants one
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
type patch struct {
	Name    string // file name, for messages
	Comment string // the first line without its "# "
	Hunks   []hunk
}

// hunk is one replacement.
type hunk struct {
	Old, New []string
}

const (
	markReplace = "@@ replace"
	markWith    = "@@ with"
)

// parsePatch reads a patch file's text; name is used in messages.
func parsePatch(name string, text string) (*patch, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1] // the final newline ends the last line
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "#") || strings.TrimSpace(strings.TrimPrefix(lines[0], "#")) == "" {
		return nil, fmt.Errorf("patch %s: the first line must be a comment (\"# what the learner got wrong\")", name)
	}
	p := &patch{Name: name, Comment: strings.TrimSpace(strings.TrimPrefix(lines[0], "#"))}
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
			p.Hunks = append(p.Hunks, hunk{})
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

// staleError says which hunk of which patch no longer fits the solution.
type staleError struct {
	Name    string
	Hunk    int // 1-based
	Matches int
}

func (e *staleError) Error() string {
	return fmt.Sprintf("stale patch %s: hunk %d matches %d times", e.Name, e.Hunk, e.Matches)
}

// apply returns src with every hunk applied, or a *staleError.
func (p *patch) apply(src string) (string, error) {
	lines := strings.Split(src, "\n")
	for i, h := range p.Hunks {
		var at []int
		for j := 0; j+len(h.Old) <= len(lines); j++ {
			if equalLines(lines[j:j+len(h.Old)], h.Old) {
				at = append(at, j)
			}
		}
		if len(at) != 1 {
			return "", &staleError{Name: p.Name, Hunk: i + 1, Matches: len(at)}
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

// format writes p back in the patch text format.
func (p *patch) format() string {
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

// wrongSolution is one planted wrong solution ready to grade: a patch
// applied to the current solution and written to a temporary file.
type wrongSolution struct {
	Kind string // "mutant" or "bug"
	Name string // file name of the patch
	Path string // the patched solution, for the overlay
	Note string // the patch's comment
}

// loadPatches applies every solutions/<id>/testdata/<dir>/*.patch to the
// solution text and writes each result under tmp. A patch that does not
// parse or apply is returned as a problem, not as an error.
func loadPatches(root, id, dir, kind, solution, tmp string) (ws []wrongSolution, probs []string) {
	files, _ := filepath.Glob(filepath.Join(root, "solutions", id, "testdata", dir, "*.patch"))
	sort.Strings(files)
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			probs = append(probs, fmt.Sprintf("read %s %s: %v", kind, name, err))
			continue
		}
		p, err := parsePatch(name, string(data))
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		out, err := p.apply(solution)
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		sub := filepath.Join(tmp, dir, strings.TrimSuffix(name, ".patch"))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			probs = append(probs, fmt.Sprintf("write %s %s: %v", kind, name, err))
			continue
		}
		path := filepath.Join(sub, "solution.go")
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			probs = append(probs, fmt.Sprintf("write %s %s: %v", kind, name, err))
			continue
		}
		ws = append(ws, wrongSolution{Kind: kind, Name: name, Path: path, Note: p.Comment})
	}
	return ws, probs
}
