package grade

import (
	"errors"
	"strings"
	"testing"
)

const patchSolution = "package x\n\nfunc F(a, b int) bool {\n\tif a < b {\n\t\treturn true\n\t}\n\treturn false\n}\n\nfunc G() {\n\treturn false\n}\n"

func TestPatchMultiHunk(t *testing.T) {
	p, err := ParsePatch("two.patch", "# Swaps the comparison and drops G's body.\n@@ replace\n\tif a < b {\n@@ with\n\tif a <= b {\n@@ replace\nfunc G() {\n\treturn false\n}\n@@ with\nfunc G() {}\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Comment != "Swaps the comparison and drops G's body." || len(p.Hunks) != 2 {
		t.Fatalf("parsed %+v", p)
	}
	got, err := p.Apply(patchSolution)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(patchSolution, "a < b", "a <= b", 1)
	want = strings.Replace(want, "func G() {\n\treturn false\n}", "func G() {}", 1)
	if got != want {
		t.Errorf("applied:\n%s\nwant:\n%s", got, want)
	}
	// Formatting and parsing again gives the same patch.
	again, err := ParsePatch("two.patch", p.Format())
	if err != nil || again.Format() != p.Format() {
		t.Errorf("format round trip: %v\n%s", err, again.Format())
	}
}

func TestPatchDeletion(t *testing.T) {
	p, err := ParsePatch("del.patch", "# Never says no.\n@@ replace\n\tif a < b {\n\t\treturn true\n\t}\n\treturn false\n@@ with\n\treturn true\n@@ replace\n\n@@ with\n")
	if err == nil {
		_, err = p.Apply(patchSolution)
	}
	// The second hunk (one blank line) occurs several times: stale.
	var se *StaleError
	if !errors.As(err, &se) || se.Hunk != 2 || se.Matches != 3 {
		t.Fatalf("err = %v, want hunk 2 matching 3 times", err)
	}
	p, err = ParsePatch("del.patch", "# Drops the early return.\n@@ replace\n\tif a < b {\n\t\treturn true\n\t}\n@@ with\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hunks[0].New) != 0 {
		t.Fatalf("an empty with part parsed as %q", p.Hunks[0].New)
	}
	got, err := p.Apply(patchSolution)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "a < b") || !strings.Contains(got, "bool {\n\treturn false\n}") {
		t.Errorf("deletion gave:\n%s", got)
	}
}

func TestPatchStale(t *testing.T) {
	for _, tc := range []struct {
		patch string
		want  string
	}{
		{"# x\n@@ replace\n\tif a > b {\n@@ with\n\tif true {\n", "stale patch s.patch: hunk 1 matches 0 times"},
		{"# x\n@@ replace\n\treturn false\n@@ with\n\treturn true\n", "stale patch s.patch: hunk 1 matches 2 times"},
		// Leading tabs count: the same text indented differently is not a match.
		{"# x\n@@ replace\nif a < b {\n@@ with\nif true {\n", "stale patch s.patch: hunk 1 matches 0 times"},
		// A later hunk is matched against what the earlier ones left.
		{"# x\n@@ replace\n\tif a < b {\n@@ with\n\tif a < b && a > 0 {\n@@ replace\n\tif a < b {\n@@ with\n\tif b > a {\n", "stale patch s.patch: hunk 2 matches 0 times"},
	} {
		p, err := ParsePatch("s.patch", tc.patch)
		if err != nil {
			t.Fatalf("%q: %v", tc.patch, err)
		}
		if _, err := p.Apply(patchSolution); err == nil || err.Error() != tc.want {
			t.Errorf("%q: err = %v, want %s", tc.patch, err, tc.want)
		}
	}
}

func TestPatchParseErrors(t *testing.T) {
	for _, tc := range []struct{ patch, want string }{
		{"@@ replace\na\n@@ with\nb\n", "first line must be a comment"},
		{"#\n@@ replace\na\n@@ with\nb\n", "first line must be a comment"},
		{"# x\n", "no \"@@ replace\" hunk"},
		{"# x\nstray\n@@ replace\na\n@@ with\n", "text before the first"},
		{"# x\n@@ replace\na\n", "has no \"@@ with\" part"},
		{"# x\n@@ with\nb\n", "without a \"@@ replace\""},
		{"# x\n@@ replace\n@@ with\nb\n", "replaces no lines"},
		{"# x\n@@ replace\na\n@@ replace\nb\n@@ with\n", "without a \"@@ with\""},
	} {
		if _, err := ParsePatch("p.patch", tc.patch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.patch, err, tc.want)
		}
	}
}
