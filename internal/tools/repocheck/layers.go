package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

const (
	layerTable      = ".layers"
	layerExceptions = ".layer-exceptions"
)

// rank is one line of .layers: packages at one height. An import must
// point to a later rank (lower down), or inside the rank when peers says
// so, and never into a layer the rank names in not.
type rank struct {
	layer, name string
	index       int
	peers       bool
	not         map[string]bool
	patterns    []string
	line        int
}

func (r *rank) String() string { return r.layer + "/" + r.name }

// noLink is a "links no PREFIX" line: the packages its patterns match
// must not have a dependency under prefix.
type noLink struct {
	prefix   string
	patterns []string
	line     int
}

// layers is .layers read.
type layers struct {
	ranks  []*rank
	noLink []noLink
	// exact and tree map a package path (or a DIR of DIR/...) to its rank.
	exact, tree map[string]*rank
}

// rankLine is "NAME[, peers][, not LAYER]: PACKAGE...".
var rankLine = regexp.MustCompile(`^([^,:]+)((?:,\s*(?:peers|not\s+[a-z]+))*):(.*)$`)

// readLayers reads the table at file; (nil, nil) when there is none.
func readLayers(file string) (*layers, error) {
	lines, err := readLines(file)
	if err != nil || lines == nil {
		return nil, err
	}
	t := &layers{exact: map[string]*rank{}, tree: map[string]*rank{}}
	layer := ""
	for _, l := range lines {
		if err := t.parseLine(l.text, &layer, l.n); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, l.n, err)
		}
	}
	if len(t.ranks) == 0 {
		return nil, fmt.Errorf("%s: no rank", file)
	}
	return t, nil
}

type numbered struct {
	text string
	n    int
}

// readLines returns file's lines that are not blank or comments; nil
// when the file does not exist.
func readLines(file string) ([]numbered, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	out := []numbered{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, numbered{line, n})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return out, nil
}

func (t *layers) parseLine(line string, layer *string, n int) error {
	if name, ok := strings.CutPrefix(line, "["); ok {
		name, ok = strings.CutSuffix(name, "]")
		if !ok || strings.TrimSpace(name) == "" {
			return errors.New(`want "[LAYER]"`)
		}
		*layer = strings.TrimSpace(name)
		return nil
	}
	if rest, ok := strings.CutPrefix(line, "links no "); ok {
		prefix, pkgs, ok := strings.Cut(rest, ":")
		if !ok || strings.TrimSpace(prefix) == "" || len(strings.Fields(pkgs)) == 0 {
			return errors.New(`want "links no PREFIX: PACKAGE..."`)
		}
		t.noLink = append(t.noLink, noLink{prefix: strings.TrimSpace(prefix), patterns: strings.Fields(pkgs), line: n})
		return nil
	}
	if *layer == "" {
		return errors.New("a rank before the first [LAYER]")
	}
	m := rankLine.FindStringSubmatch(line)
	if m == nil || len(strings.Fields(m[3])) == 0 {
		return errors.New(`want "RANK[, peers][, not LAYER]: PACKAGE..."`)
	}
	r := &rank{layer: *layer, name: strings.TrimSpace(m[1]), index: len(t.ranks), not: map[string]bool{}, patterns: strings.Fields(m[3]), line: n}
	for _, attr := range strings.Split(m[2], ",") {
		attr = strings.TrimSpace(attr)
		if attr == "peers" {
			r.peers = true
		} else if l, ok := strings.CutPrefix(attr, "not "); ok {
			r.not[strings.TrimSpace(l)] = true
		}
	}
	t.ranks = append(t.ranks, r)
	for _, p := range r.patterns {
		into, key := t.exact, p
		if dir, ok := strings.CutSuffix(p, "/..."); ok {
			into, key = t.tree, dir
		}
		if other := into[key]; other != nil {
			return fmt.Errorf("%s is already in rank %s (line %d)", p, other, other.line)
		}
		into[key] = r
	}
	return nil
}

// rankOf is the rank of pkg (a path relative to the module, "." for its
// root): its own entry, else the nearest DIR/... above it.
func (t *layers) rankOf(pkg string) *rank {
	if r := t.exact[pkg]; r != nil {
		return r
	}
	for dir := pkg; ; {
		if r := t.tree[dir]; r != nil {
			return r
		}
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			return nil
		}
		dir = dir[:i]
	}
}

// matches reports whether pattern (a path or DIR/...) names pkg.
func matches(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

// exception is one line of .layer-exceptions.
type exception struct {
	importer, imported, reason string
	line                       int
	used                       bool
}

var issueRef = regexp.MustCompile(`\bissue \d+\b`)

// readExceptions reads the known exceptions; none when the file is absent.
func readExceptions(file string) ([]*exception, error) {
	lines, err := readLines(file)
	if err != nil {
		return nil, err
	}
	var out []*exception
	for _, l := range lines {
		head, reason, ok := strings.Cut(l.text, " -- ")
		f := strings.Fields(head)
		if !ok || len(f) != 2 || !issueRef.MatchString(reason) {
			return nil, fmt.Errorf(`%s:%d: want "IMPORTER IMPORTED -- REASON (issue N)": the reason and the issue that removes it are required`, file, l.n)
		}
		out = append(out, &exception{importer: f[0], imported: f[1], reason: strings.TrimSpace(reason), line: l.n})
	}
	return out, nil
}

// graph is the module's packages (relative paths, "." for the root) and,
// for each, what it imports from the module.
type graph map[string][]string

// checkImports holds every package to the table: each in a rank, each
// import down (or listed as an exception); every exception still needed.
// notes are table entries that name no package (kept for a package to come,
// or stale).
func checkImports(t *layers, exc []*exception, g graph) (problems, notes []string) {
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		from := t.rankOf(p)
		if from == nil {
			problems = append(problems, fmt.Sprintf("%s: %s is in no rank: add it to %s where it belongs", layerTable, p, layerTable))
			continue
		}
		for _, imp := range g[p] {
			to := t.rankOf(imp)
			if to == nil {
				continue // reported as a package of its own
			}
			why := wrongWay(from, to)
			if why == "" || excepted(exc, p, imp) {
				continue
			}
			problems = append(problems, fmt.Sprintf("layers: %s (%s) imports %s (%s), %s: move what they share down, or pass it from above",
				p, from, imp, to, why))
		}
	}
	for _, e := range exc {
		if !e.used {
			problems = append(problems, fmt.Sprintf("%s:%d: %s no longer imports %s against %s: remove the line",
				layerExceptions, e.line, e.importer, e.imported, layerTable))
		}
	}
	return problems, unusedPatterns(t, pkgs)
}

// wrongWay says why an import from rank from to rank to is not allowed,
// "" when it is.
func wrongWay(from, to *rank) string {
	switch {
	case to.index < from.index:
		return "a higher rank"
	case to == from && !from.peers:
		return "a package of its own rank, whose packages do not import each other"
	case from.not[to.layer]:
		return fmt.Sprintf("in the %s layer, which rank %s does not import", to.layer, from.name)
	}
	return ""
}

func excepted(exc []*exception, importer, imported string) bool {
	for _, e := range exc {
		if e.importer == importer && e.imported == imported {
			e.used = true
			return true
		}
	}
	return false
}

// unusedPatterns notes the table's entries that name no package.
func unusedPatterns(t *layers, pkgs []string) []string {
	var notes []string
	for _, r := range t.ranks {
		for _, pat := range r.patterns {
			found := false
			for _, p := range pkgs {
				if matches(pat, p) {
					found = true
					break
				}
			}
			if !found {
				notes = append(notes, fmt.Sprintf("%s:%d: %s names no package (yet)", layerTable, r.line, pat))
			}
		}
	}
	return notes
}

// modulePath reads the module's path from root's go.mod.
func modulePath(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("read go.mod: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", errors.New("go.mod names no module")
}

// goList runs go list -f '{{.ImportPath}} {{join .Imports " "}}' with
// args in root and returns each listed package's imports.
func goList(root string, args ...string) (map[string][]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, args...)...)
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	g := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			g[f[0]] = f[1:]
		}
	}
	return g, nil
}

// moduleGraph lists the module's packages and their imports from the
// module, as paths relative to it.
func moduleGraph(root, mod string) (graph, error) {
	all, err := goList(root, "./...")
	if err != nil {
		return nil, err
	}
	g := graph{}
	for p, imps := range all {
		rel, ok := relPath(mod, p)
		if !ok {
			continue
		}
		g[rel] = []string{}
		for _, imp := range imps {
			if r, ok := relPath(mod, imp); ok {
				g[rel] = append(g[rel], r)
			}
		}
	}
	return g, nil
}

// relPath is pkg relative to the module mod ("." for its root package);
// false for a package outside it.
func relPath(mod, pkg string) (string, bool) {
	if pkg == mod {
		return ".", true
	}
	rel, ok := strings.CutPrefix(pkg, mod+"/")
	return rel, ok
}

// checkNoLink finds, for each "links no" line, a chain of imports from a
// package it names to a package under its prefix.
func checkNoLink(root, mod string, t *layers, g graph) ([]string, error) {
	var named []string
	for _, p := range sortedKeys(g) {
		for _, nl := range t.noLink {
			if matchesAny(nl.patterns, p) {
				named = append(named, "./"+strings.TrimPrefix(p, "."))
				break
			}
		}
	}
	if len(named) == 0 {
		return nil, nil
	}
	full, err := goList(root, append([]string{"-deps"}, named...)...)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, nl := range t.noLink {
		for _, p := range sortedKeys(g) {
			if !matchesAny(nl.patterns, p) {
				continue
			}
			if chain := pathTo(full, absPath(mod, p), nl.prefix); chain != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %s links %s: %s", layerTable, nl.line, p, chain[len(chain)-1], strings.Join(chain, " -> ")))
			}
		}
	}
	return problems, nil
}

// absPath is the import path of rel, a package of the module mod.
func absPath(mod, rel string) string {
	if rel == "." {
		return mod
	}
	return mod + "/" + rel
}

func matchesAny(patterns []string, pkg string) bool {
	for _, pat := range patterns {
		if matches(pat, pkg) {
			return true
		}
	}
	return false
}

func sortedKeys(g graph) []string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pathTo is the shortest chain of imports in full from start to a
// package under prefix; nil when there is none.
func pathTo(full map[string][]string, start, prefix string) []string {
	prev := map[string]string{start: ""}
	queue := []string{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if strings.HasPrefix(p, prefix) {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, imp := range full[p] {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

// checkLayers holds the module at root to its .layers table; nothing to
// check (nil) without the table.
func checkLayers(root string) (problems, notes []string, err error) {
	t, err := readLayers(filepath.Join(root, layerTable))
	if err != nil || t == nil {
		return nil, nil, err
	}
	exc, err := readExceptions(filepath.Join(root, layerExceptions))
	if err != nil {
		return nil, nil, err
	}
	mod, err := modulePath(root)
	if err != nil {
		return nil, nil, err
	}
	g, err := moduleGraph(root, mod)
	if err != nil {
		return nil, nil, err
	}
	problems, notes = checkImports(t, exc, g)
	linked, err := checkNoLink(root, mod, t, g)
	if err != nil {
		return nil, nil, err
	}
	return append(problems, linked...), notes, nil
}

// printLayers writes the module's packages rank by rank, top to bottom,
// and those in no rank last: the table as it applies today.
func printLayers(w io.Writer, root string) error {
	t, err := readLayers(filepath.Join(root, layerTable))
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("no %s", layerTable)
	}
	mod, err := modulePath(root)
	if err != nil {
		return err
	}
	g, err := moduleGraph(root, mod)
	if err != nil {
		return err
	}
	in := map[*rank][]string{}
	var none []string
	for _, p := range sortedKeys(g) {
		if r := t.rankOf(p); r != nil {
			in[r] = append(in[r], p)
		} else {
			none = append(none, p)
		}
	}
	for _, r := range t.ranks {
		fmt.Fprintf(w, "%-34s %s\n", r.String()+":", strings.Join(in[r], " "))
	}
	if len(none) > 0 {
		fmt.Fprintf(w, "%-34s %s\n", "in no rank:", strings.Join(none, " "))
	}
	return nil
}
