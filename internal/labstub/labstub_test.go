package labstub

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

var at = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResetKeepsTheLearnersCodeAside: each reset keeps what the file held
// under a name of its own, a second one the same second included, and
// a file that already is the original is left alone.
func TestResetKeepsTheLearnersCodeAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cas.go")
	os.WriteFile(path, []byte("mine"), 0o644)
	backup, err := Reset(path, []byte("stub"), at)
	if err != nil || backup != path+".bak-20260304-050607" {
		t.Fatalf("Reset = %q, %v", backup, err)
	}
	if read(t, path) != "stub" || read(t, backup) != "mine" {
		t.Fatalf("stub %q, backup %q", read(t, path), read(t, backup))
	}
	os.WriteFile(path, []byte("mine again"), 0o644)
	second, err := Reset(path, []byte("stub"), at)
	if err != nil || second != path+".bak-20260304-050607-2" || read(t, second) != "mine again" || read(t, backup) != "mine" {
		t.Fatalf("second reset = %q, %v", second, err)
	}
	if b, err := Reset(path, []byte("stub"), at); err != nil || b != "" {
		t.Fatalf("reset of the original = %q, %v; want no backup", b, err)
	}
}

func TestResetWritesAMissingStub(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cas.go")
	if b, err := Reset(path, []byte("stub"), at); err != nil || b != "" || read(t, path) != "stub" {
		t.Fatalf("Reset of a missing file = %q, %v", b, err)
	}
}

func TestOriginalPrefersTheCatalogue(t *testing.T) {
	cat := fstest.MapFS{"01_cas/cas.go": {Data: []byte("shipped")}}
	b, err := Original(cat, t.TempDir(), "01_cas/cas.go")
	if err != nil || string(b) != "shipped" {
		t.Fatalf("Original = %q, %v", b, err)
	}
	// Not in the catalogue and no git repository: a clear error.
	if _, err := Original(cat, t.TempDir(), "02_lock/lock.go"); !errors.Is(err, ErrNoOriginal) {
		t.Fatalf("Original of an unknown stub: %v, want ErrNoOriginal", err)
	}
}
