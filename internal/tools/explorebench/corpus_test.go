package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/labrun"
)

// The bugs corpus leaves out what unshowable.txt lists, and a name there
// that no patch has is an error rather than a silent miscount.
func TestBugsCorpusLeavesOutTheUnshowable(t *testing.T) {
	root := t.TempDir()
	l, ok := labrun.Find("06")
	if !ok {
		t.Fatal("no lab 06")
	}
	bugs := filepath.Join(root, "solutions", l.ID, "testdata", "bugs")
	if err := os.MkdirAll(bugs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(bugs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("shown.patch", "# x\n")
	write("contract.patch", "# y\n")
	write(unshowableFile, "# comment\n\ncontract -- only go test sees the error value\n")
	ps, err := wrongPatches(root, l, "bugs")
	if err != nil || len(ps) != 1 || filepath.Base(ps[0]) != "shown.patch" {
		t.Fatalf("want only shown.patch, got %v, %v", ps, err)
	}
	write(unshowableFile, "contract -- why\ngone -- renamed since\n")
	if _, err := wrongPatches(root, l, "bugs"); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("a listed name without a patch must be an error, got %v", err)
	}
	write(unshowableFile, "contract\n")
	if _, err := wrongPatches(root, l, "bugs"); err == nil {
		t.Fatal("a line without a reason must be an error")
	}
	if _, err := wrongPatches(root, l, "nonsense"); err == nil {
		t.Fatal("an unknown set must be an error")
	}
}
