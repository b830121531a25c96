package grade

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// A Refusal is a reason a lab file is not graded, with where it is.
type Refusal struct {
	File string // labs/<id>/<name>, slash-separated
	Line int    // 0 when it is about the whole file
	Why  string
}

func (r Refusal) String() string {
	if r.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Why)
	}
	return fmt.Sprintf("%s: %s", r.File, r.Why)
}

// RefusedError is the error of a grading that did not run because of what
// is in the lab's folder.
type RefusedError struct {
	// Lab is the lab's id, or "(every lab)" for a refusal of the
	// course's files themselves.
	Lab      string
	Refusals []Refusal
}

func (e *RefusedError) Error() string {
	lines := make([]string, len(e.Refusals))
	for i, r := range e.Refusals {
		lines[i] = r.String()
	}
	return fmt.Sprintf("lab %s is not graded until this is fixed:\n%s", e.Lab, strings.Join(lines, "\n"))
}

// refusedCalls are package functions a lab file may not name, even
// without calling them (a function value can be called later).
var refusedCalls = map[string]string{
	"os.Exit":         "calls os.Exit: a lab may not end the test process (return an error instead)",
	"os.StartProcess": "calls os.StartProcess: a lab starts no other programs",
}

// CheckLabFile reads one of the learner's files of lab (path names it in
// messages) and returns what it does that a lab may not: an import not
// on the lab's allowlist (AllowedImports; cgo is import "C"), a dot
// import, //go:linkname, os.Exit. A file that does not parse is left to
// the compiler, which says why better.
func CheckLabFile(lab, path string, src []byte) []Refusal {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []Refusal
	refuse := func(pos token.Pos, why string) {
		out = append(out, Refusal{File: path, Line: fset.Position(pos).Line, Why: why})
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				refuse(c.Pos(), "uses //go:linkname: a lab reaches other packages only through what they export")
			}
		}
	}
	names := checkImports(lab, f, refuse)
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok {
			if why, bad := refusedCalls[names[x.Name]+"."+sel.Sel.Name]; bad {
				refuse(sel.Pos(), why)
			}
		}
		return true
	})
	return out
}

// checkImports refuses imports off lab's allowlist and dot imports, and
// returns the file's names for its imports (local name -> import path).
func checkImports(lab string, f *ast.File, refuse func(token.Pos, string)) map[string]string {
	allowed := AllowedImports(lab)
	names := map[string]string{}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		if _, ok := slices.BinarySearch(allowed, path); !ok {
			refuse(imp.Pos(), importAdvice(lab, path))
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			refuse(imp.Pos(), fmt.Sprintf("imports %q with a dot: name the package", path))
		}
		names[name] = path
	}
	return names
}
