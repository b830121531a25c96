package embedetcd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/statedir"
)

// memberDirs lists what a start left in parent.
func memberDirs(t *testing.T, parent string) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(parent, "member-*"))
	if err != nil {
		t.Fatal(err)
	}
	return left
}

func withFreeSpace(t *testing.T, f func(string) (uint64, bool)) {
	saved := freeSpace
	freeSpace = f
	t.Cleanup(func() { freeSpace = saved })
}

// A disk with less room than etcd's write-ahead log needs fails the start
// with a message naming the directory and the space needed, and leaves no
// member directory behind.
func TestStartRefusesWithoutDiskSpace(t *testing.T) {
	parent := t.TempDir()
	withFreeSpace(t, func(string) (uint64, bool) { return 32 << 20, true })
	_, err := Start(context.Background(), WithDataDir(parent))
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), parent) || !strings.Contains(err.Error(), "needs 80 MB") {
		t.Fatalf("err = %v, want a no-space error naming %s and 80 MB", err, parent)
	}
	_, err = StartCluster(context.Background(), 3, WithDataDir(parent))
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "needs 240 MB") {
		t.Fatalf("cluster: err = %v, want a no-space error for 3 members", err)
	}
	if left := memberDirs(t, parent); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// The same on a real small file system, when the test may mount one; and
// when the free-space check is fooled, etcd's own panic about the
// write-ahead log comes back as an error rather than ending the program.
func TestStartOnSmallTmpfs(t *testing.T) {
	if runtime.GOOS != "linux" || os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root on Linux")
	}
	mnt := t.TempDir()
	if err := mountTmpfs(mnt, "32m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unmount(mnt) })
	parent := filepath.Join(mnt, "etcd")
	_, err := Start(context.Background(), WithDataDir(parent))
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), parent) {
		t.Fatalf("err = %v, want a no-space error naming %s", err, parent)
	}
	withFreeSpace(t, func(string) (uint64, bool) { return 0, false })
	_, err = Start(context.Background(), WithDataDir(parent))
	if err == nil || errors.Is(err, ErrNoSpace) {
		t.Fatalf("err = %v, want etcd's own failure as an error", err)
	}
	t.Logf("etcd's own failure: %v", err)
	if left := memberDirs(t, parent); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// A data dir parent that someone else prepared is refused.
func TestStartRefusesSharedParent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no owners or mode bits to check")
	}
	parent := filepath.Join(t.TempDir(), "playground-etcd")
	if err := os.Mkdir(parent, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	_, err := Start(context.Background(), WithDataDir(parent))
	if !errors.Is(err, statedir.ErrNotPrivate) || !strings.Contains(err.Error(), "chmod go-w "+parent) {
		t.Fatalf("world-writable parent: err = %v", err)
	}
	if os.Getuid() == 0 {
		os.Chmod(parent, 0o700)
		if err := os.Chown(parent, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		_, err := Start(context.Background(), WithDataDir(parent))
		if !errors.Is(err, statedir.ErrNotPrivate) || !strings.Contains(err.Error(), "belongs to user 4242") {
			t.Fatalf("parent of another user: err = %v", err)
		}
	}
	if left := memberDirs(t, parent); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// Listening on every address, the server still gives endpoints a client
// can dial, not http://[::]:PORT.
func TestEndpointsOfWildcardListen(t *testing.T) {
	srv := start(t, WithListen("0.0.0.0", 0))
	eps := srv.Endpoints()
	if len(eps) != 1 || !strings.HasPrefix(eps[0], "http://127.0.0.1:") {
		t.Fatalf("endpoints = %v, want http://127.0.0.1:PORT", eps)
	}
	if _, err := client(t, srv).Put(ctxT(t, 5*time.Second), "k", "v"); err != nil {
		t.Fatalf("put through %s: %v", eps[0], err)
	}
}
