package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ownership-election/playground/internal/labstub"
)

// StubsSum is the manifest of the pristine stubs (labstub.SumsFile),
// relative to the module root: one line per lab, "<git blob hash>
// labs/<id>/<file>", for the file each lab.yaml names.
const StubsSum = labstub.SumsFile

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
		fmt.Fprintf(&b, "%s  %s\n", labstub.BlobHash(data), s)
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
	entries, err := labstub.ReadSums(root)
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
	git, prefix, haveGit := gitCheckout(root)
	if !haveGit {
		p.markEdited(root, entries)
		return p, nil
	}
	r := &restorer{p: p, root: root, tmp: tmp, git: git, prefix: prefix, course: map[string]bool{}}
	if err := r.restoreHead(stubHash); err != nil {
		return nil, err
	}
	if err := r.restoreStubs(entries); err != nil {
		return nil, err
	}
	if err := r.hideLearnersFiles(); err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	if r.dirty {
		p.Dir = tmp
	}
	return p, nil
}

// gitCheckout is a git runner for root and root's path inside its
// repository; false when git is not installed or root is not in a work
// tree with a commit.
func gitCheckout(root string) (git func(args ...string) ([]byte, error), prefix string, ok bool) {
	git = gitRunner(root)
	if _, err := exec.LookPath("git"); err != nil {
		return nil, "", false
	}
	top, err := git("rev-parse", "--show-prefix")
	if err != nil {
		return nil, "", false
	}
	if _, err := git("rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return nil, "", false
	}
	return git, strings.TrimSpace(string(top)), true
}

// markEdited is what can be done without git: only the manifest's hashes
// tell an edited stub, whose untouched-stub check is then skipped.
func (p *pristine) markEdited(root string, entries []labstub.Sum) {
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Path)))
		if err != nil || labstub.BlobHash(data) != e.Hash {
			p.Unchecked[e.Path] = true
			p.Notes = append(p.Notes, fmt.Sprintf("%s is not the stub the course ships (it differs from %s), and without git (not installed, or not a git checkout) the shipped copy cannot be restored: the check that every step fails on the untouched stub is skipped for it", e.Path, StubsSum))
		}
	}
}

// restorer writes labs/ as shipped under tmp, from git, and puts in p's
// overlay every Go file that differs from root's working tree.
type restorer struct {
	p         *pristine
	root, tmp string
	git       func(args ...string) ([]byte, error)
	prefix    string          // root's path inside the repository
	course    map[string]bool // the course's files under labs/, slash-separated
	dirty     bool            // a file differs from the working tree
}

// restore makes rel (slash-separated) read as data.
func (r *restorer) restore(rel string, data []byte) error {
	dst := filepath.Join(r.tmp, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy the shipped labs: %w", err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("copy the shipped labs: %w", err)
	}
	cur, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err == nil && bytes.Equal(cur, data) {
		return nil
	}
	r.dirty = true
	if strings.HasSuffix(rel, ".go") {
		r.p.Overlay[filepath.FromSlash(rel)] = dst
		r.p.Changed = append(r.p.Changed, rel)
	}
	return nil
}

// restoreHead restores every file of labs/ at HEAD but the stubs (which
// come from the manifest) and the files a learner committed.
func (r *restorer) restoreHead(stubHash map[string]string) error {
	list, err := r.git("ls-tree", "-r", "-z", "--full-name", "--name-only", "HEAD", "--", "labs")
	if err != nil {
		return err
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		rel := strings.TrimPrefix(name, r.prefix) // ls-tree names are relative to the repository
		if _, ok := stubHash[rel]; ok {
			continue // restoreStubs, from the manifest
		}
		if learnersFile(rel, stubHash) {
			continue // a helper file the learner committed
		}
		r.course[rel] = true
		data, err := r.git("show", "HEAD:"+name)
		if err != nil {
			return err
		}
		if err := r.restore(rel, data); err != nil {
			return err
		}
	}
	return nil
}

// restoreStubs restores each stub the manifest names from git's object
// store, or from HEAD (with a note) when git has no such object.
func (r *restorer) restoreStubs(entries []labstub.Sum) error {
	for _, e := range entries {
		r.course[e.Path] = true
		data, err := r.git("cat-file", "blob", e.Hash)
		if err != nil {
			data, err = r.git("show", "HEAD:"+r.prefix+e.Path)
			if err != nil {
				return fmt.Errorf("read the stub %s: git has neither the object %s named in %s nor a committed copy: %w", e.Path, e.Hash[:12], StubsSum, err)
			}
			r.p.Notes = append(r.p.Notes, fmt.Sprintf("git has no object %s for %s (named in %s; a clone without the course's history?): checking HEAD's copy, which holds your solution if you committed one", e.Hash[:12], e.Path, StubsSum))
		}
		if err := r.restore(e.Path, data); err != nil {
			return err
		}
	}
	return nil
}

// hideLearnersFiles hides the Go files the learner added (helpers, a copy
// of the stub), which would not compile next to the shipped stub.
func (r *restorer) hideLearnersFiles() error {
	return filepath.WalkDir(filepath.Join(r.root, "labs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, err := filepath.Rel(r.root, path)
		if err != nil {
			return err
		}
		if !r.course[filepath.ToSlash(rel)] {
			r.dirty = true
			r.p.Overlay[rel] = ""
			r.p.Changed = append(r.p.Changed, filepath.ToSlash(rel)+" (not the course's)")
		}
		return nil
	})
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
