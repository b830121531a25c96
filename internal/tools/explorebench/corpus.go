package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ownership-election/playground/internal/labrun"
)

// unshowableFile lists, beside the graders' bug patches, those that no
// run can show: the mistake is in a contract only go test sees (a wrong
// error value, a context error returned), not in anything etcd or the
// resource records. The share of the bugs corpus is counted over the
// others, so the file must say why for each.
const unshowableFile = "unshowable.txt"

// wrongPatches lists the wrong solutions of a lab's set: "explore" (the
// patches written for exploration), "bugs" (the graders' patches, less
// those unshowable.txt names, each printed once with its reason) or "all"
// (both, for -replay to find any name).
func wrongPatches(root string, l labrun.Lab, set string) ([]string, error) {
	dir := filepath.Join(root, "solutions", l.ID, "testdata")
	glob := func(sub string) []string {
		ps, _ := filepath.Glob(filepath.Join(dir, sub, "*.patch"))
		return ps
	}
	switch set {
	case "explore":
		return glob("explore"), nil
	case "all":
		// bugs first: where a name is in both, the explore one (found
		// last) is what -replay meant before there were two.
		return append(glob("bugs"), glob("explore")...), nil
	case "bugs":
	default:
		return nil, fmt.Errorf("explorebench: -corpus %q: explore or bugs", set)
	}
	skip, err := unshowable(filepath.Join(dir, "bugs", unshowableFile))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range glob("bugs") {
		name := strings.TrimSuffix(filepath.Base(p), ".patch")
		if why, ok := skip[name]; ok {
			fmt.Printf("%s %-28s not showable: %s\n", l.ID, name, why)
			delete(skip, name)
			continue
		}
		out = append(out, p)
	}
	// A name left over is a patch renamed or removed: the list would
	// silently stop excluding it, so say so rather than miscount.
	if len(skip) > 0 {
		var left []string
		for n := range skip {
			left = append(left, n)
		}
		sort.Strings(left)
		return nil, fmt.Errorf("explorebench: %s names no patch: %s", filepath.Join(dir, "bugs", unshowableFile), strings.Join(left, ", "))
	}
	return out, nil
}

// unshowable reads a list of "NAME -- reason" lines (# starts a comment);
// a missing file lists nothing.
func unshowable(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, why, ok := strings.Cut(text, " -- ")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("%s:%d: want NAME -- reason", path, line)
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(why)
	}
	return out, sc.Err()
}
