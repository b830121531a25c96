package main

import (
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// labStub matches the learner's lab packages, which fail by design until
// solved: make quick leaves them to labcheck, as make test does.
var labStub = regexp.MustCompile(`^labs/[0-9][0-9]_`)

// changedPackages lists, as ./dir patterns, the packages holding a file
// changed since base: committed on this branch (base...HEAD), changed in
// the working tree or the index, or new and not ignored. A changed file
// that is not Go (a golden file, a YAML fixture) counts for the package
// it sits under.
func changedPackages(root, base string) ([]string, error) {
	var files []string
	for _, args := range [][]string{
		{"diff", "--name-only", base + "...HEAD"},
		{"diff", "--name-only", "HEAD"},
		{"ls-files", "--others", "--exclude-standard"},
	} {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		files = append(files, strings.Fields(string(out))...)
	}
	seen := map[string]bool{}
	var pkgs []string
	for _, f := range files {
		dir, ok := packageDir(root, path.Dir(f))
		if !ok || seen[dir] || labStub.MatchString(dir+"/") {
			continue
		}
		seen[dir] = true
		pkgs = append(pkgs, "./"+dir)
	}
	sort.Strings(pkgs)
	return pkgs, nil
}

// packageDir is the nearest directory at or above dir that holds Go
// files; false when there is none below the root. A deleted
// package has no files left and is not listed.
func packageDir(root, dir string) (string, bool) {
	for ; dir != "." && dir != "/" && dir != ""; dir = path.Dir(dir) {
		if strings.Contains("/"+dir+"/", "/testdata/") {
			continue
		}
		if matches, _ := filepath.Glob(filepath.Join(root, dir, "*.go")); len(matches) > 0 {
			return dir, true
		}
	}
	return "", false
}
