package grade

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindRoot(t *testing.T) {
	// This test runs inside the course's own checkout.
	root := FindRoot(".")
	if root == "" {
		t.Fatal("the repository itself was not found as a checkout")
	}
	if _, err := os.Stat(filepath.Join(root, "labs", "labs.go")); err != nil {
		t.Fatalf("root %s has no labs: %v", root, err)
	}
	if got := FindRoot(filepath.Join(root, "internal", "tui")); got != root {
		t.Fatalf("from a subfolder: %q, want %q", got, root)
	}
	// The lab screen's fixture module has labs but is another module, so
	// the search goes on up to the repository.
	if got := FindRoot(filepath.Join(root, "internal", "tui", "screen", "lab", "testdata", "course")); got != root {
		t.Fatalf("from the fixture module: %q, want %q", got, root)
	}
	if got := FindRoot(t.TempDir()); got != "" {
		t.Fatalf("a temp dir is not a checkout, got %q", got)
	}
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, "labs"), 0o755)
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644)
	if got := FindRoot(other); got != "" {
		t.Fatalf("another module is not a checkout, got %q", got)
	}
}
