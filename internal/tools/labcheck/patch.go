package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ownership-election/playground/internal/grade"
)

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
		p, err := grade.ParsePatch(name, string(data))
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		out, err := p.Apply(solution)
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
