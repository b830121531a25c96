package lessons

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// testFuncs finds top-level Test functions by scanning tokens; these are
// the shapes it must not get wrong.
func TestTestFuncsFindsTopLevelTests(t *testing.T) {
	src := `package x

import "testing"

type suite struct{}

func (s suite) TestMethodIsNotATest(t *testing.T) {}

func TestStep1_Plain(t *testing.T) {
	f := func(t *testing.T) {}
	_ = f
	t.Run("sub", func(t *testing.T) {})
}

func TestGeneric[T any](t *testing.T) {}

var TestNotAFunc = func(t *testing.T) {}

func helper() { _ = struct{ f func() }{f: func() {}} }

func TestStep2_AfterLiterals(t *testing.T) {
	if x := (func() int { return 1 })(); x > 0 {
		_ = []func(){func() {}}
	}
}

// func TestInAComment(t *testing.T) {}
var s = "func TestInAString(t *testing.T) {}"
`
	fsys := fstest.MapFS{"lab/a_test.go": {Data: []byte(src)}}
	names, probs := testFuncs(fsys, "lab", "labs")
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	got := slices.Sorted(maps.Keys(names))
	want := []string{"TestGeneric", "TestStep1_Plain", "TestStep2_AfterLiterals"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

func TestTestFuncsReportsUnreadableGo(t *testing.T) {
	fsys := fstest.MapFS{"lab/a_test.go": {Data: []byte("package x\n\nfunc TestA(t *testing.T) { s := \"unterminated\n}\n")}}
	_, probs := testFuncs(fsys, "lab", "labs")
	if len(probs) != 1 || probs[0].Path != "labs/lab/a_test.go" || !strings.Contains(probs[0].Msg, "cannot read Go") {
		t.Fatalf("problems = %+v, want one 'cannot read Go' for labs/lab/a_test.go", probs)
	}
}
