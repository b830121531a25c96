package statedir

import (
	"path/filepath"
	"testing"
)

func TestDirPrecedence(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv(EnvOverride, "")
	t.Setenv("XDG_STATE_HOME", tmp)
	got, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(tmp, "playground"); got != want {
		t.Fatalf("with XDG_STATE_HOME: got %q, want %q", got, want)
	}
	over := filepath.Join(tmp, "over")
	t.Setenv(EnvOverride, over)
	if got, _ := Dir(); got != over {
		t.Fatalf("override ignored: got %q, want %q", got, over)
	}
}
