package embedetcd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

func newDataDir(parent string) (*dataDir, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir parent: %w", err)
	}
	removeStale(parent)
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

// removeStale deletes member directories whose lock nobody holds.
func removeStale(parent string) {
	locks, _ := filepath.Glob(filepath.Join(parent, "member-*.lock"))
	for _, l := range locks {
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
