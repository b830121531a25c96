package grade

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// ModulePath is the course's Go module; a folder whose go.mod declares it
// is a checkout where the labs can be edited and graded.
const ModulePath = "github.com/ownership-election/playground"

// FindRoot looks for the checkout that holds the labs, from dir up to the
// file system's root, and returns "" when dir is not inside one (for
// example an installed binary run from the home folder).
func FindRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if isCheckout(dir) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isCheckout(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok {
			if strings.Trim(strings.TrimSpace(rest), `"`) != ModulePath {
				return false
			}
			fi, err := os.Stat(filepath.Join(dir, "labs"))
			return err == nil && fi.IsDir()
		}
	}
	return false
}

// UsesEtcd reports whether the lab in dir (labs/<id>) is graded against
// etcd: its files import etcd's client, embedetcd or the etcd harness.
// Such a lab's tests start an etcd of their own unless the grader hands
// them one (EtcdEnv).
func UsesEtcd(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil && (strings.Contains(string(data), "go.etcd.io/") || strings.Contains(string(data), "embedetcd") || strings.Contains(string(data), "etcdharness")) {
			return true
		}
	}
	return false
}
