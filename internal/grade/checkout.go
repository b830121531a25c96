package grade

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// FromCheckout reads the learner's part of a lab from the checkout at
// root: its stub files, through overlay when one maps them (tests grade
// solutions this way; keys relative to root). The course's own test
// files in the folder are left alone (the course's copies are built); any
// other .go file there is refused with a line that names it, as is a
// checkout whose course files this program's copies do not match
// (CheckCheckout).
func (c *Course) FromCheckout(root, lab string, overlay map[string]string) (Submission, error) {
	if err := c.CheckCheckout(root); err != nil {
		return Submission{}, err
	}
	stubs, tests := c.StubFiles(lab), c.TestFiles(lab)
	if len(stubs) == 0 {
		return Submission{}, fmt.Errorf("%w: %s", ErrNoSuchLab, lab)
	}
	names, err := labGoFiles(root, lab, overlay)
	if err != nil {
		return Submission{}, err
	}
	sub := Submission{Lab: lab, Files: map[string][]byte{}}
	for _, name := range names {
		if slices.Contains(tests, name) {
			continue
		}
		rel := filepath.Join("labs", lab, name)
		src := filepath.Join(root, rel)
		if to, ok := overlay[rel]; ok {
			if !filepath.IsAbs(to) {
				to = filepath.Join(root, to)
			}
			src = to
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return Submission{}, fmt.Errorf("grade lab %s: %w", lab, err)
		}
		sub.Files[name] = data
	}
	return sub, nil
}

// labGoFiles names the .go files of root/labs/<lab>, overlay's additions
// and removals included.
func labGoFiles(root, lab string, overlay map[string]string) ([]string, error) {
	dir := filepath.Join("labs", lab)
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("grade lab %s: %w", lab, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			names = append(names, e.Name())
		}
	}
	for from, to := range overlay {
		if filepath.Dir(filepath.Clean(from)) != dir || !strings.HasSuffix(from, ".go") {
			continue
		}
		name := filepath.Base(from)
		if to == "" {
			names = slices.DeleteFunc(names, func(n string) bool { return n == name })
		} else if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// CheckCheckout compares this program's copies of the course files (all
// but the stubs and the build-only files, which grading never builds)
// with git's, when root is a git checkout and the program
// was built from one: from the commit it was built at when it says so,
// else from HEAD. A copy that differs means the program was built from
// edited tests or harness (go run embeds the working tree): that is
// refused with the files and how to restore them. A released binary (a
// module version, checked by the go command against the checksum
// database) and a checkout without git are not compared.
func (c *Course) CheckCheckout(root string) error {
	rev := buildRevision()
	if rev == "" || root == "" {
		return nil
	}
	files, err := c.Files()
	if err != nil {
		return err
	}
	blobs, ok := gitBlobs(root, rev)
	if !ok {
		return nil
	}
	var bad []Refusal
	for _, f := range files {
		if lab, inLab := labFolder(f); (inLab && slices.Contains(c.StubFiles(lab), path.Base(f))) || BuildOnly(f) {
			continue
		}
		data, err := fs.ReadFile(c.fsys, f)
		if err != nil {
			return err
		}
		if blobs[f] != gitBlobHash(data) {
			bad = append(bad, Refusal{File: f, Why: fmt.Sprintf("the copy this program was built with differs from git's (%s): restore it (git checkout %s -- %s) and run the program again", rev, rev, f)})
		}
	}
	if len(bad) > 0 {
		return &RefusedError{Lab: "(every lab)", Refusals: bad}
	}
	return nil
}

// buildRevision is the git revision to compare the course with: the one
// the binary was built at (vcs.revision), HEAD for a build with no
// version (go run, go test), "" for a released module.
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "HEAD"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return s.Value
		}
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" || strings.Contains(v, "+dirty") {
		return "HEAD"
	}
	return ""
}

// gitBlobs lists the blob hash of every course file at rev, or false when
// root is not a git checkout that has rev.
func gitBlobs(root, rev string) (map[string]string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-tree", "-r", rev, "--", "go.mod", "go.sum", "labs", "embedetcd", "internal/faultproxy", "internal/statedir", "internal/atomicfile")
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	blobs := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		meta, file, ok := strings.Cut(sc.Text(), "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			blobs[file] = f[2]
		}
	}
	return blobs, len(blobs) > 0
}

// gitBlobHash is git's object name of a file's content (SHA-1 repos).
func gitBlobHash(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return fmt.Sprintf("%x", h.Sum(nil))
}
