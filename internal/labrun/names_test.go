package labrun

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Every name a lab run's verdict can carry, each rule (a finding's
// property) and each violation its rules can name, has a line of its own
// in the README's list: a learner who reads "violated: one-holder
// (wrong-key)" or a program that reads "violation": "wrong-key" must be
// able to look it up. The rules are read from the registry; the
// violations from this package's source, every breaks or breaksRun call,
// so a new name fails here until the README says what it means.
func TestEveryVerdictNameIsInTheREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\s*- `([a-z0-9-]+)`").FindAllStringSubmatch(string(readme), -1) {
		listed[m[1]] = true
	}
	names := map[string]string{} // name -> where it comes from
	for _, id := range IDs() {
		for _, p := range Scenario(id).Shows {
			names[p.Name] = "lab " + id + "'s rule"
		}
	}
	violations := violationNames(t)
	if len(violations) < 10 {
		t.Fatalf("found only %d violation names in the source: %v", len(violations), violations)
	}
	for n, where := range violations {
		names[n] = where
	}
	var missing []string
	for n, where := range names {
		if !listed[n] {
			missing = append(missing, n+" ("+where+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("the README's list of rules and violations (a line \"- `name`: ...\") lacks:\n  %s", strings.Join(missing, "\n  "))
	}
}

// violationNames are the names this package's rules give what they
// find: the string literal that begins each breaks or breaksRun call.
func violationNames(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || (id.Name != "breaks" && id.Name != "breaksRun") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: a violation named by an expression, not a literal: the README check cannot read it", fset.Position(call.Pos()))
				return true
			}
			name, _ := strconv.Unquote(lit.Value)
			out[name] = "violation in " + fset.Position(call.Pos()).String()
			return true
		})
	}
	return out
}
