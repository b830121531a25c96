package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pristine makes labcheck check the labs as committed, not as a learner
// has edited them: `make test` must pass in a checkout where the stubs
// hold the learner's (or the reference) solutions. The embedded copies
// (labs.Catalog) are no help here, since they are built from the working
// tree; git's HEAD is the reference.
type pristine struct {
	// Dir holds labs/ as committed (a temporary copy), or is the module
	// root when the checkout is not a git work tree or labs/ is unchanged.
	Dir string
	// Overlay makes go test see labs/ as committed: every .go file that
	// differs from HEAD is replaced by HEAD's copy, and every .go file git
	// does not know is hidden (mapped to "", which go treats as deleted).
	Overlay map[string]string
	// Changed lists the files the overlay covers, for -v.
	Changed []string
}

// loadPristine compares labs/ under root with git's HEAD and writes the
// committed copies under tmp. Outside a git work tree (an unpacked
// archive) the working tree is taken as it is.
func loadPristine(root, tmp string) (*pristine, error) {
	p := &pristine{Dir: root, Overlay: map[string]string{}}
	if _, err := exec.LookPath("git"); err != nil {
		return p, nil
	}
	git := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	top, err := git("rev-parse", "--show-prefix")
	if err != nil {
		return p, nil // not a git work tree, or no commit yet
	}
	prefix := strings.TrimSpace(string(top)) // root's path inside the repository
	if _, err := git("rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return p, nil
	}
	list, err := git("ls-tree", "-r", "-z", "--full-name", "--name-only", "HEAD", "--", "labs")
	if err != nil {
		return nil, err
	}
	committed := map[string]bool{}
	dirty := false
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		rel := strings.TrimPrefix(name, prefix) // ls-tree names are relative to the repository
		committed[rel] = true
		data, err := git("show", "HEAD:"+name)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("copy committed labs: %w", err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, fmt.Errorf("copy committed labs: %w", err)
		}
		cur, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err == nil && bytes.Equal(cur, data) {
			continue
		}
		dirty = true
		if strings.HasSuffix(rel, ".go") {
			p.Overlay[filepath.FromSlash(rel)] = dst
			p.Changed = append(p.Changed, rel)
		}
	}
	// Go files the learner added (helpers, a copy of the stub) would not
	// compile next to the committed stub: hide them.
	err = filepath.WalkDir(filepath.Join(root, "labs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if !committed[filepath.ToSlash(rel)] {
			dirty = true
			p.Overlay[rel] = ""
			p.Changed = append(p.Changed, filepath.ToSlash(rel)+" (not committed)")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	if dirty {
		p.Dir = tmp
	}
	return p, nil
}

// with returns the pristine overlay plus extra (which wins).
func (p *pristine) with(extra map[string]string) map[string]string {
	if p == nil {
		return extra
	}
	out := make(map[string]string, len(p.Overlay)+len(extra))
	for k, v := range p.Overlay {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}
