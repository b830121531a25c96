package labstub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobHashIsGits: the hashes git hash-object gives.
func TestBlobHashIsGits(t *testing.T) {
	for data, want := range map[string]string{
		"":            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
		"package x\n": "823aafd0712b6c533df84b17d9b7ac6ae43e66fa",
	} {
		if got := BlobHash([]byte(data)); got != want {
			t.Errorf("BlobHash(%q) = %s, want %s", data, got, want)
		}
	}
}

func writeSums(t *testing.T, root, sums string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "labs", "01_cas"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(SumsFile)), []byte(sums), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUntouchedIsTheShippedStub: the file the manifest names by its
// hash is untouched; an edited one, or another lab's hash, is not; no
// manifest or no file is an error, and so is a line that is not a sum.
func TestUntouchedIsTheShippedStub(t *testing.T) {
	root := t.TempDir()
	writeSums(t, root, "# a comment\n\n823aafd0712b6c533df84b17d9b7ac6ae43e66fa  labs/01_cas/cas.go\ne69de29bb2d1d6434b8b29ae775ad8c2e48c5391  labs/02_lock/lock.go\n")
	stub := filepath.Join(root, "labs", "01_cas", "cas.go")
	if _, err := Untouched(root, "labs/01_cas/cas.go"); err == nil {
		t.Fatal("no file, and no error")
	}
	os.WriteFile(stub, []byte("package x\n"), 0o644)
	if ok, err := Untouched(root, "labs/01_cas/cas.go"); !ok || err != nil {
		t.Fatalf("the shipped stub: untouched %v, err %v", ok, err)
	}
	os.WriteFile(stub, []byte("package x // written\n"), 0o644)
	if ok, err := Untouched(root, "labs/01_cas/cas.go"); ok || err != nil {
		t.Fatalf("an edited file: untouched %v, err %v", ok, err)
	}
	os.WriteFile(stub, nil, 0o644) // 02_lock's hash, not this file's
	if ok, err := Untouched(root, "labs/01_cas/cas.go"); ok || err != nil {
		t.Fatalf("another lab's stub: untouched %v, err %v", ok, err)
	}

	writeSums(t, root, "823aafd0  labs/01_cas/cas.go\n")
	if _, err := Untouched(root, "labs/01_cas/cas.go"); err == nil || !strings.Contains(err.Error(), "stubs.sum:1: want") {
		t.Fatalf("a line that is not a sum: %v", err)
	}
	os.Remove(filepath.Join(root, filepath.FromSlash(SumsFile)))
	if sums, err := ReadSums(root); sums != nil || err != nil {
		t.Fatalf("no manifest reads as (%v, %v), want nothing", sums, err)
	}
	if _, err := Untouched(root, "labs/01_cas/cas.go"); err == nil {
		t.Fatal("no manifest, and no error")
	}
}
