package main

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

const (
	// MaxFileBytes is the largest tracked file allowed without a reason.
	MaxFileBytes = 1 << 20
	// MaxFuncLines is the longest product function allowed without an
	// owner who will split it.
	MaxFuncLines = 80
	largeList    = ".large-files"
	longList     = ".long-functions"
)

// run does both checks and says what is wrong, all of it, before failing.
func run(w io.Writer, root string, files []string) error {
	var problems []string
	large, err := checkLargeFiles(root, files)
	if err != nil {
		return err
	}
	problems = append(problems, large...)
	long, stale, err := checkLongFunctions(root, files)
	if err != nil {
		return err
	}
	problems = append(problems, long...)
	table, err := checkReadmeTable(root, files)
	if err != nil {
		return err
	}
	problems = append(problems, table...)
	layered, unnamed, err := checkLayers(root)
	if err != nil {
		return err
	}
	problems = append(problems, layered...)
	stale = append(stale, unnamed...)
	for _, s := range stale {
		fmt.Fprintf(w, "note: %s\n", s)
	}
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s)", len(problems))
	}
	fmt.Fprintf(w, "repocheck: no tracked file over %d bytes outside %s, no product function over %d lines outside %s, every package folder in README.md's table, every import down the ranks of %s but those in %s\n",
		MaxFileBytes, largeList, MaxFuncLines, longList, layerTable, layerExceptions)
	return nil
}

// trackedFiles lists the files git tracks under root, as slash paths.
func trackedFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("list tracked files: %w", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// entry is one line of an allow list: a path pattern, what it names in
// that path (a function, or * for all), and why it is allowed.
type entry struct {
	pattern, name, reason string
	line                  int
	used                  bool
}

// readList reads an allow list: "PATTERN [NAME] -- REASON" a line, # for
// comments. withName says the list has a NAME column. A line without a
// reason is an error: the list exists to say why.
func readList(file string, withName bool) ([]*entry, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	var list []*entry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseEntry(line, withName)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		e.line = n
		list = append(list, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return list, nil
}

func parseEntry(line string, withName bool) (*entry, error) {
	head, reason, ok := strings.Cut(line, " -- ")
	if !ok || strings.TrimSpace(reason) == "" {
		return nil, errors.New(`want "PATTERN [NAME] -- REASON"; the reason is required`)
	}
	fields := strings.Fields(head)
	want := 1
	if withName {
		want = 2
	}
	if len(fields) != want {
		return nil, fmt.Errorf("want %d field(s) before \" -- \", got %d", want, len(fields))
	}
	e := &entry{pattern: fields[0], reason: strings.TrimSpace(reason)}
	if withName {
		e.name = fields[1]
	}
	return e, nil
}

// matchPath reports whether a slash path matches pattern: a path.Match
// pattern, or DIR/** for everything under DIR.
func matchPath(pattern, p string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/**"); ok {
		return strings.HasPrefix(p, dir+"/")
	}
	ok, _ := path.Match(pattern, p)
	return ok
}

// checkLargeFiles names every tracked file over MaxFileBytes that
// .large-files does not list.
func checkLargeFiles(root string, files []string) ([]string, error) {
	allowed, err := readList(filepath.Join(root, largeList), false)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, f := range files {
		st, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !st.Mode().IsRegular() || st.Size() <= MaxFileBytes {
			continue // a deleted file is git's business, not ours
		}
		if !listed(allowed, f, "") {
			problems = append(problems, fmt.Sprintf("%s: %d bytes, over %d: remove it (or list it in %s with the reason)",
				f, st.Size(), MaxFileBytes, largeList))
		}
	}
	return problems, nil
}

func listed(list []*entry, p, name string) bool {
	for _, e := range list {
		if matchPath(e.pattern, p) && (e.name == "" || e.name == "*" || e.name == name) {
			e.used = true
			return true
		}
	}
	return false
}

// product reports whether a tracked file is product Go code: not a test,
// not test data. The tools under internal/tools count: they are read and
// changed like the rest.
func product(f string) bool {
	if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
		return false
	}
	for _, part := range strings.Split(f, "/") {
		if part == "testdata" {
			return false
		}
	}
	return true
}

// longFunc is a function or method over the limit.
type longFunc struct {
	file, name string
	line, n    int
}

// longFunctions finds every product function over MaxFuncLines, counted
// from its func line to its closing brace.
func longFunctions(root string, files []string) ([]longFunc, error) {
	var long []longFunc
	fset := token.NewFileSet()
	for _, f := range files {
		if !product(f) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
			if n := end - start + 1; n > MaxFuncLines {
				long = append(long, longFunc{file: f, name: funcName(fn), line: start, n: n})
			}
		}
	}
	sort.Slice(long, func(i, j int) bool { return long[i].n > long[j].n })
	return long, nil
}

// funcName is how the allow list names a function: F, or T.M for a
// method (pointer receivers without the star).
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// checkLongFunctions names every long function .long-functions does not
// list, and the entries that no longer match one (stale: remove them).
func checkLongFunctions(root string, files []string) (problems, stale []string, err error) {
	allowed, err := readList(filepath.Join(root, longList), true)
	if err != nil {
		return nil, nil, err
	}
	long, err := longFunctions(root, files)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range long {
		if !listed(allowed, f.file, f.name) {
			problems = append(problems, fmt.Sprintf("%s:%d: %s is %d lines, over %d: split it into named steps",
				f.file, f.line, f.name, f.n, MaxFuncLines))
		}
	}
	for _, e := range allowed {
		if !e.used && e.name != "*" {
			stale = append(stale, fmt.Sprintf("%s:%d: %s %s is no longer over %d lines: remove the entry",
				longList, e.line, e.pattern, e.name, MaxFuncLines))
		}
	}
	return problems, stale, nil
}

func printLongFunctions(w io.Writer, root string, files []string) error {
	long, err := longFunctions(root, files)
	if err != nil {
		return err
	}
	for _, f := range long {
		fmt.Fprintf(w, "%4d %s:%d %s\n", f.n, f.file, f.line, f.name)
	}
	return nil
}
