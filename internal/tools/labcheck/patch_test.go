package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ownership-election/playground/lessons"
)

// TestRepositoryPatchesApply keeps every stored mutant and bug in step with
// its solution: a patch that went stale fails here, in make test's unit
// stage, with the hunk that no longer matches.
func TestRepositoryPatchesApply(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	ids, err := discover(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, id := range ids {
		file := labFile(t, root, id)
		sol, err := os.ReadFile(filepath.Join(root, "solutions", id, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{"mutants", "bugs"} {
			ws, probs := loadPatches(root, id, dir, dir, string(sol), t.TempDir())
			for _, p := range probs {
				t.Errorf("%s: %s", id, p)
			}
			n += len(ws)
		}
	}
	if n == 0 {
		t.Error("no patches found under solutions/*/testdata")
	}
}

// labFile is the solution file named by a lab's manifest.
func labFile(t *testing.T, root, id string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "labs", id, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lab, _ := lessons.ParseLab(id+"/lab.yaml", id, data, nil)
	if lab == nil || lab.File == "" {
		t.Fatalf("%s: lab.yaml names no file", id)
	}
	return lab.File
}
