package embedetcd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/statedir"
)

// dataDir is one member's data directory plus the lock that marks it as in
// use. A process that dies without Close leaves both behind; the next
// start finds the lock free and removes them.
type dataDir struct {
	path string
	lock *os.File
}

func dataParent(c *config) string {
	if c.dataDir != "" {
		return c.dataDir
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("playground-etcd-%d", os.Getuid()))
}

// memberSpace is the free space one member needs in its data dir's file
// system: etcd preallocates its write-ahead log in 64 MB segments and
// panics when the first cannot be created, and the database and snapshots
// need a little more.
const memberSpace = 80 << 20

// freeSpace reports the bytes available to this user in dir's file
// system; ok is false where it cannot be told. A variable for tests.
var freeSpace = diskFree

// prepareParent makes parent (private to this user: another user's
// directory there is refused), removes what killed processes left in it,
// and checks that members more members have room in it, so a full disk
// fails with a clear message instead of a panic inside etcd.
func prepareParent(parent string, members int) error {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("create data dir parent: %w", err)
	}
	if err := statedir.CheckPrivate(parent); err != nil {
		return fmt.Errorf("etcd data dir: %w", err)
	}
	removeStale(parent)
	if free, ok := freeSpace(parent); ok && free < uint64(members)*memberSpace {
		return fmt.Errorf("%w: %s has %s free and etcd needs %s there (%s a member: its write-ahead log takes 64 MB at once); free some space, or set TMPDIR to a disk with room",
			ErrNoSpace, parent, megabytes(free), megabytes(uint64(members)*memberSpace), megabytes(memberSpace))
	}
	return nil
}

// ErrNoSpace is wrapped by the error of a start refused for lack of disk
// space.
var ErrNoSpace = errors.New("embedetcd: not enough disk space for etcd")

func megabytes(n uint64) string { return fmt.Sprintf("%d MB", n>>20) }

func newDataDir(parent string) (*dataDir, error) {
	if err := prepareParent(parent, 1); err != nil {
		return nil, err
	}
	path, err := os.MkdirTemp(parent, "member-")
	if err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		os.RemoveAll(path)
		return nil, fmt.Errorf("create data dir lock: %w", err)
	}
	if err := lockOwn(lock); err != nil {
		lock.Close()
		os.RemoveAll(path)
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	return &dataDir{path: path, lock: lock}, nil
}

// staleAfter is how old a lock file must be before removeStale looks at
// it. A start running at the same moment (another test, another process)
// creates its lock file a moment before it locks it; trying that fresh
// file would both delete a live directory and make the owner's lock fail.
const staleAfter = 10 * time.Second

// removeStale deletes member directories whose lock nobody holds.
func removeStale(parent string) {
	locks, _ := filepath.Glob(filepath.Join(parent, "member-*.lock"))
	for _, l := range locks {
		if fi, err := os.Stat(l); err != nil || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if isStale(f) {
			os.RemoveAll(strings.TrimSuffix(l, ".lock"))
			os.Remove(l)
		}
		f.Close()
	}
}

func (d *dataDir) remove() error {
	err := os.RemoveAll(d.path)
	os.Remove(d.lock.Name())
	d.lock.Close()
	if err != nil {
		return fmt.Errorf("remove data dir: %w", err)
	}
	return nil
}
