package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// StubsSum is the manifest of the pristine stubs, relative to the module
// root: one line per lab, "<git blob hash>  labs/<id>/<file>", for the
// file each lab.yaml names. Lines starting with # are comments.
const StubsSum = "labs/stubs.sum"

// pristine makes labcheck check the labs as the course ships them, not as
// a learner has edited them: `make test` must pass in a checkout where the
// stubs hold the learner's (or the reference) solutions, committed or not.
// The embedded copies (labs.Catalog) are no help here, since they are
// built from the working tree, and neither is git's HEAD alone, which
// holds the learner's solutions once they commit them.
//
// So the stubs come from StubsSum: each is read from git's object store by
// its blob hash (git cat-file), which any clone with the course's history
// has, whatever was committed since. The rest of labs/ (tests, manifests,
// kv, the harness) comes from HEAD, and a .go file in a lab folder that is
// neither its stub nor a test (a helper of the learner's, committed or
// not) is left out. Without git the working tree is taken as it is, and a
// stub that differs from StubsSum cannot be restored: its check on the
// untouched stub is skipped and Notes says so.
type pristine struct {
	// Dir holds labs/ as shipped (a temporary copy), or is the module
	// root when the checkout is not a git work tree or labs/ is unchanged.
	Dir string
	// Overlay makes go test see labs/ as shipped: every .go file that
	// differs is replaced by the shipped copy, and every .go file that is
	// not the course's is hidden (mapped to "", which go treats as
	// deleted).
	Overlay map[string]string
	// Changed lists the files the overlay covers.
	Changed []string
	// Notes are what labcheck should tell about how it found the stubs
	// (a missing manifest or git object, no git).
	Notes []string
	// Unchecked holds the stubs (labs/<id>/<file>, slash-separated) that
	// differ from StubsSum and could not be restored: the untouched-stub
	// check of their lab cannot run.
	Unchecked map[string]bool
}

// stubEntry is one line of StubsSum.
type stubEntry struct {
	Hash string
	Path string // labs/<id>/<file>, slash-separated
}

var stubLine = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})  (labs/\d\d_[a-z0-9_]+/[^/\s]+\.go)$`)

// readStubsSum parses root's StubsSum. A missing file is (nil, nil).
func readStubsSum(root string) ([]stubEntry, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(StubsSum)))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", StubsSum, err)
	}
	var out []stubEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := stubLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: want \"<git blob hash>  labs/NN_slug/file.go\", got %q", StubsSum, n, line)
		}
		out = append(out, stubEntry{Hash: m[1], Path: m[2]})
	}
	return out, nil
}

// blobHash is git's object id of a file holding data (SHA-1 repositories).
func blobHash(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// labFileLine finds the `file:` line of a lab.yaml.
var labFileLine = regexp.MustCompile(`(?m)^file:\s*['"]?([^'"\s]+)['"]?\s*$`)

// currentStubs lists labs/<id>/<file> for every lab folder under root,
// from each lab.yaml's file line, sorted.
func currentStubs(root string) ([]string, error) {
	ids, err := discover(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(root, "labs", id, "lab.yaml"))
		if err != nil {
			return nil, fmt.Errorf("lab %s: %w", id, err)
		}
		m := labFileLine.FindSubmatch(data)
		if m == nil {
			return nil, fmt.Errorf("lab %s: lab.yaml names no file", id)
		}
		out = append(out, "labs/"+id+"/"+string(m[1]))
	}
	sort.Strings(out)
	return out, nil
}

// writeStubsSum records the stubs in root's working tree as the pristine
// ones (labcheck -write-stubs, for course authors after changing a stub).
func writeStubsSum(root string) error {
	stubs, err := currentStubs(root)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# The learners' stub files as the course ships them: git blob hashes.\n")
	b.WriteString("# labcheck checks these copies (git cat-file), not the files in labs/,\n")
	b.WriteString("# so that make test passes whatever a learner wrote or committed there.\n")
	b.WriteString("# After changing a stub, run: go run ./internal/tools/labcheck -write-stubs\n")
	for _, s := range stubs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(s)))
		if err != nil {
			return fmt.Errorf("read stub: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", blobHash(data), s)
	}
	return os.WriteFile(filepath.Join(root, filepath.FromSlash(StubsSum)), []byte(b.String()), 0o644)
}

// gitRunner runs git in root.
func gitRunner(root string) func(args ...string) ([]byte, error) {
	return func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
}

// loadPristine finds labs/ as shipped for the checkout at root and writes
// the copies that differ from the working tree under tmp.
func loadPristine(root, tmp string) (*pristine, error) {
	p := &pristine{Dir: root, Overlay: map[string]string{}, Unchecked: map[string]bool{}}
	entries, err := readStubsSum(root)
	if err != nil {
		return nil, err
	}
	if entries == nil {
		p.Notes = append(p.Notes, fmt.Sprintf("no %s: the stubs are taken from git's HEAD, which holds a learner's solutions once committed", StubsSum))
	}
	stubHash := map[string]string{}
	for _, e := range entries {
		stubHash[e.Path] = e.Hash
	}
	git := gitRunner(root)
	haveGit := false
	var prefix string
	if _, err := exec.LookPath("git"); err == nil {
		if top, err := git("rev-parse", "--show-prefix"); err == nil {
			if _, err := git("rev-parse", "--verify", "-q", "HEAD"); err == nil {
				haveGit = true
				prefix = strings.TrimSpace(string(top)) // root's path inside the repository
			}
		}
	}
	if !haveGit {
		// Only the manifest's hashes can tell an edited stub here.
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Path)))
			if err != nil || blobHash(data) != e.Hash {
				p.Unchecked[e.Path] = true
				p.Notes = append(p.Notes, fmt.Sprintf("%s is not the stub the course ships (it differs from %s), and without git (not installed, or not a git checkout) the shipped copy cannot be restored: the check that every step fails on the untouched stub is skipped for it", e.Path, StubsSum))
			}
		}
		return p, nil
	}

	dirty := false
	// restore makes rel (slash-separated) read as data.
	restore := func(rel string, data []byte) error {
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("copy the shipped labs: %w", err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("copy the shipped labs: %w", err)
		}
		cur, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err == nil && bytes.Equal(cur, data) {
			return nil
		}
		dirty = true
		if strings.HasSuffix(rel, ".go") {
			p.Overlay[filepath.FromSlash(rel)] = dst
			p.Changed = append(p.Changed, rel)
		}
		return nil
	}
	list, err := git("ls-tree", "-r", "-z", "--full-name", "--name-only", "HEAD", "--", "labs")
	if err != nil {
		return nil, err
	}
	course := map[string]bool{}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		rel := strings.TrimPrefix(name, prefix) // ls-tree names are relative to the repository
		if _, ok := stubHash[rel]; ok {
			continue // below, from the manifest
		}
		if learnersFile(rel, stubHash) {
			continue // a helper file the learner committed
		}
		course[rel] = true
		data, err := git("show", "HEAD:"+name)
		if err != nil {
			return nil, err
		}
		if err := restore(rel, data); err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		course[e.Path] = true
		data, err := git("cat-file", "blob", e.Hash)
		if err != nil {
			data, err = git("show", "HEAD:"+prefix+e.Path)
			if err != nil {
				return nil, fmt.Errorf("read the stub %s: git has neither the object %s named in %s nor a committed copy: %w", e.Path, e.Hash[:12], StubsSum, err)
			}
			p.Notes = append(p.Notes, fmt.Sprintf("git has no object %s for %s (named in %s; a clone without the course's history?): checking HEAD's copy, which holds your solution if you committed one", e.Hash[:12], e.Path, StubsSum))
		}
		if err := restore(e.Path, data); err != nil {
			return nil, err
		}
	}
	// Go files the learner added (helpers, a copy of the stub) would not
	// compile next to the shipped stub: hide them.
	err = filepath.WalkDir(filepath.Join(root, "labs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if !course[filepath.ToSlash(rel)] {
			dirty = true
			p.Overlay[rel] = ""
			p.Changed = append(p.Changed, filepath.ToSlash(rel)+" (not the course's)")
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

// learnersFile reports whether rel (slash-separated, under labs/) is a Go
// file a learner added to a lab folder: with a manifest, a lab folder
// holds its stub and its tests, and any other .go file in it is theirs.
func learnersFile(rel string, stubs map[string]string) bool {
	if len(stubs) == 0 || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
		return false
	}
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || parts[0] != "labs" || !labDir.MatchString(parts[1]) {
		return false
	}
	_, stub := stubs[rel]
	return !stub
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
