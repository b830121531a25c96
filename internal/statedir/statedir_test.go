package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

func TestDirRefusesSharedOrForeignDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no owners or mode bits to check")
	}
	shared := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777)
	t.Setenv(EnvOverride, shared)
	if _, err := Dir(); !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "other users can write to "+shared) {
		t.Fatalf("world-writable state dir: err = %v", err)
	}
	os.Chmod(shared, 0o700)
	if _, err := Dir(); err != nil {
		t.Fatalf("private state dir refused: %v", err)
	}
	// A symlink to a directory of someone else's is refused like the directory.
	if os.Getuid() == 0 {
		foreign := filepath.Join(t.TempDir(), "foreign")
		os.Mkdir(foreign, 0o700)
		if err := os.Chown(foreign, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(foreign, link); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{foreign, link} {
			t.Setenv(EnvOverride, d)
			if _, err := Dir(); !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "belongs to user 4242") {
				t.Errorf("%s: err = %v", d, err)
			}
		}
	}
}
