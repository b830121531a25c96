package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// tableFolder is a folder named in the first column of README's "Where
// things are" table.
var tableFolder = regexp.MustCompile("`([A-Za-z0-9_./]+)/`")

// folderCovered reports whether README's table names dir: itself, or as
// NN_slug for a lab or solution, or under internal/tools/ for a tool.
func folderCovered(named map[string]bool, dir string) bool {
	switch {
	case named[dir]:
		return true
	case labStub.MatchString(dir + "/"):
		return named["labs/NN_slug"]
	case regexp.MustCompile(`^solutions/[0-9][0-9]_`).MatchString(dir):
		return named["solutions/NN_slug"]
	case strings.HasPrefix(dir, "internal/tools/"):
		return named["internal/tools"]
	}
	return false
}

// checkReadmeTable names every package folder README.md's table of
// folders leaves out.
func checkReadmeTable(root string, files []string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // not a checkout of the course: nothing to hold to
	}
	if err != nil {
		return nil, fmt.Errorf("read README.md: %w", err)
	}
	named := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range tableFolder.FindAllStringSubmatch(first, -1) {
			named[m[1]] = true
		}
	}
	dirs := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, ".go") && !strings.Contains("/"+f, "/testdata/") {
			dirs[path.Dir(f)] = true
		}
	}
	var problems []string
	for d := range dirs {
		if d != "." && !folderCovered(named, d) {
			problems = append(problems, fmt.Sprintf("README.md: the folder table does not name %s/ (add a row saying what lives there)", d))
		}
	}
	sort.Strings(problems)
	return problems, nil
}
