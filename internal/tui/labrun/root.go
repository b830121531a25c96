package labrun

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
// example an installed binary run from the home folder). Pass the result
// as Options.Root and to Prewarm.
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
