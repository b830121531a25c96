package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

const testTable = `# a comment
[top]
cli: cmd/... app
[middle]
views, peers: views/...
parts, not bottom: a b
[bottom]
engine: engine/...
[leaves]
leaves: leaf
links no example.com/m/engine: a
`

func parseTable(t *testing.T, text string) *layers {
	t.Helper()
	root := write(t, map[string]string{layerTable: text})
	tab, err := readLayers(filepath.Join(root, layerTable))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestRankOfTakesTheMostSpecificEntry: a package's own entry wins over
// DIR/..., a deeper DIR/... over a shallower one; a package no entry
// names has no rank.
func TestRankOfTakesTheMostSpecificEntry(t *testing.T) {
	tab := parseTable(t, testTable+"[late]\nsub: views/special/...\nexact: views/x\n")
	for pkg, want := range map[string]string{
		"cmd":                 "top/cli",
		"cmd/tool":            "top/cli",
		"views":               "middle/views",
		"views/y/z":           "middle/views",
		"views/special/deep":  "late/sub",
		"views/x":             "late/exact",
		"views/x/below":       "middle/views",
		"a":                   "middle/parts",
		"engine/sub":          "bottom/engine",
		"leaf":                "leaves/leaves",
		"leaf/under/the/leaf": "",
		"appendix":            "",
	} {
		got := ""
		if r := tab.rankOf(pkg); r != nil {
			got = r.String()
		}
		if got != want {
			t.Errorf("rankOf(%q) = %q, want %q", pkg, got, want)
		}
	}
	r := tab.rankOf("views")
	if !r.peers || tab.rankOf("a").peers || !tab.rankOf("a").not["bottom"] || len(tab.noLink) != 1 || tab.noLink[0].prefix != "example.com/m/engine" {
		t.Fatalf("attributes read wrong: %+v %+v %+v", r, tab.rankOf("a"), tab.noLink)
	}
}

func TestLayersTableRefusesWhatItCannotRead(t *testing.T) {
	for name, text := range map[string]string{
		"rank before layer": "cli: app\n",
		"no packages":       "[top]\ncli:\n",
		"twice":             "[top]\ncli: app\n[low]\nleaves: app\n",
		"unknown attribute": "[top]\ncli, sideways: app\n",
		"bad links line":    "[top]\ncli: app\nlinks no : app\n",
	} {
		root := write(t, map[string]string{layerTable: text})
		if _, err := readLayers(filepath.Join(root, layerTable)); err == nil {
			t.Errorf("%s: %q was read without an error", name, text)
		}
	}
	root := write(t, map[string]string{layerExceptions: "a b -- no issue named\n"})
	if _, err := readExceptions(filepath.Join(root, layerExceptions)); err == nil || !strings.Contains(err.Error(), "issue") {
		t.Errorf("an exception without its issue was read: %v", err)
	}
}

// TestImportsHeldToTheRanks: down is fine, and so is sideways in a
// peers rank; up, sideways elsewhere, into a layer the rank does not
// import, and from a package in no rank are each reported, naming both
// packages; a listed exception passes, and one no longer needed fails.
func TestImportsHeldToTheRanks(t *testing.T) {
	tab := parseTable(t, testTable)
	fine := graph{
		"app":       {"views/one", "a", "engine", "leaf"},
		"views/one": {"views/two", "a", "b", "engine"},
		"views/two": {},
		"a":         {"leaf"},
		"b":         {},
		"engine":    {"leaf"},
		"leaf":      {},
	}
	if problems, _ := checkImports(tab, nil, fine); len(problems) != 0 {
		t.Fatalf("a tree that points down fails: %v", problems)
	}
	for _, c := range []struct {
		name, from, to, says string
	}{
		{"up", "leaf", "engine", "leaf (leaves/leaves) imports engine (bottom/engine), a higher rank"},
		{"up a layer", "engine", "views/one", "engine (bottom/engine) imports views/one (middle/views), a higher rank"},
		{"sideways", "a", "b", "a (middle/parts) imports b (middle/parts), a package of its own rank"},
		{"not that layer", "a", "engine", "a (middle/parts) imports engine (bottom/engine), in the bottom layer, which rank parts does not import"},
	} {
		g := graph{}
		for k, v := range fine {
			g[k] = append([]string(nil), v...)
		}
		g["b"] = nil
		g[c.from] = append(g[c.from], c.to)
		problems, _ := checkImports(tab, nil, g)
		if len(problems) != 1 || !strings.Contains(problems[0], c.says) {
			t.Errorf("%s: want one problem saying %q, got %q", c.name, c.says, problems)
		}
		exc := func() []*exception {
			return []*exception{{importer: c.from, imported: c.to, reason: "moving (issue 1)"}}
		}
		if problems, _ := checkImports(tab, exc(), g); len(problems) != 0 {
			t.Errorf("%s: a listed exception still fails: %q", c.name, problems)
		}
		if problems, _ := checkImports(tab, exc(), fine); len(problems) != 1 || !strings.Contains(problems[0], "no longer imports "+c.to) {
			t.Errorf("%s: a stale exception is not reported: %q", c.name, problems)
		}
	}
	problems, _ := checkImports(tab, nil, graph{"stray": {"leaf"}, "leaf": nil})
	if len(problems) != 1 || !strings.Contains(problems[0], "stray is in no rank") {
		t.Errorf("a package in no rank: %q", problems)
	}
	if _, notes := checkImports(tab, nil, fine); len(notes) != 1 || !strings.Contains(notes[0], "cmd/... names no package") {
		t.Errorf("an entry that names no package is not noted: %q", notes)
	}
}

// module is a small Go module whose engine imports its top package
// app (a planted upward import); app reaches leaf through views/one and a.
func module(t *testing.T, exceptions string) string {
	t.Helper()
	files := map[string]string{
		"go.mod":          "module example.com/m\n\ngo 1.22\n",
		layerTable:        testTable,
		"app/app.go":      "package app\n\nimport _ \"example.com/m/views/one\"\n",
		"views/one/o.go":  "package one\n\nimport _ \"example.com/m/a\"\n",
		"a/a.go":          "package a\n\nimport _ \"example.com/m/leaf\"\n",
		"a/a_test.go":     "package a\n\nimport _ \"example.com/m/app\"\n", // tests are not held to it
		"leaf/leaf.go":    "package leaf\n",
		"engine/e.go":     "package engine\n\nimport _ \"example.com/m/app\"\n",
		"cmd/tool/t.go":   "package main\n\nfunc main() {}\n",
		"views/one/x.txt": "not Go",
	}
	if exceptions != "" {
		files[layerExceptions] = exceptions
	}
	return write(t, files)
}

// TestLayersOnAModule runs the check as make test does, on a module
// with go list: the planted upward import fails it, naming both
// packages; listed, it passes; a stale exception fails; a "links no"
// line finds the chain to what it forbids.
func TestLayersOnAModule(t *testing.T) {
	var out bytes.Buffer
	root := module(t, "")
	err := run(&out, root, nil)
	if err == nil || !strings.Contains(out.String(), "layers: engine (bottom/engine) imports app (top/cli), a higher rank") {
		t.Fatalf("the upward import is not reported: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "a_test") || strings.Count(out.String(), "\nlayers: ") != 1 {
		t.Fatalf("want exactly the one upward import:\n%s", out.String())
	}

	out.Reset()
	root = module(t, "engine app -- the engine takes it from above (issue 9)\n")
	if err := run(&out, root, nil); err != nil {
		t.Fatalf("the listed exception still fails: %v\n%s", err, out.String())
	}

	out.Reset()
	root = module(t, "engine app -- the engine takes it from above (issue 9)\nviews/one leaf -- gone already (issue 9)\n")
	if err := run(&out, root, nil); err == nil || !strings.Contains(out.String(), ".layer-exceptions:2: views/one no longer imports leaf") {
		t.Fatalf("the stale exception is not reported: %v\n%s", err, out.String())
	}

	writeFile(t, root, layerExceptions, "engine app -- the engine takes it from above (issue 9)\n")
	writeFile(t, root, layerTable, testTable+"links no example.com/m/leaf: app\n")
	out.Reset()
	err = run(&out, root, nil)
	if err == nil || !strings.Contains(out.String(), "app links example.com/m/leaf: example.com/m/app -> example.com/m/views/one -> example.com/m/a -> example.com/m/leaf") {
		t.Fatalf("the forbidden link is not reported: %v\n%s", err, out.String())
	}
}

// TestTheTreeKeepsItsLayers: this repository passes its own table,
// every known exception still occurs (else it is stale), and the
// learner's progress is among the packages that must not link etcd.
func TestTheTreeKeepsItsLayers(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := readLayers(filepath.Join(root, layerTable))
	if err != nil || tab == nil {
		t.Fatalf("read the repository's %s: %v", layerTable, err)
	}
	held := false
	for _, nl := range tab.noLink {
		held = held || nl.prefix == "go.etcd.io/" && matchesAny(nl.patterns, "internal/progress")
	}
	if !held {
		t.Fatalf("%s does not hold internal/progress to linking no go.etcd.io/", layerTable)
	}
	problems, notes, err := checkLayers(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("the tree breaks its layers:\n%s", strings.Join(problems, "\n"))
	}
	for _, n := range notes {
		t.Log(n)
	}
}

// TestPrintLayersShowsEveryPackageInItsRank: -layers lists each rank's
// packages, top to bottom, and a package in no rank apart.
func TestPrintLayersShowsEveryPackageInItsRank(t *testing.T) {
	root := module(t, "")
	writeFile(t, root, "stray/s.go", "package stray\n")
	var out bytes.Buffer
	if err := printLayers(&out, root); err != nil {
		t.Fatal(err)
	}
	want := []string{"top/cli:", "cmd/tool", "middle/views:", "views/one", "middle/parts:", "a", "leaves/leaves:", "leaf", "in no rank:", "stray"}
	at := 0
	for _, w := range want {
		i := strings.Index(out.String()[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, out.String())
		}
		at += i + len(w)
	}
}
