package grade

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	playground "github.com/ownership-election/playground"
)

// A Course is the labs as the course ships them: the grader tests,
// harness, manifests, go.mod and go.sum of an fs.FS laid out like the
// repository (the copies the binary embeds: playground.Kit). A lab is
// graded by building the course's own files with only the learner's stub
// files put in (Prepare), never the test files or helpers of a checkout.
type Course struct {
	fsys fs.FS

	once  sync.Once
	files []string // what is built and written, sorted
	hash  string
	err   error

	dirMu sync.Mutex // one writer at a time in this process
}

// NewCourse returns the course held in fsys.
func NewCourse(fsys fs.FS) *Course { return &Course{fsys: fsys} }

var builtin = sync.OnceValue(func() *Course { return NewCourse(playground.Kit()) })

// Builtin is the course this binary embeds.
func Builtin() *Course { return builtin() }

// labFolder reports whether p (slash-separated) is inside a lab's folder,
// labs/NN_slug/.
func labFolder(p string) (string, bool) {
	parts := strings.Split(p, "/")
	if len(parts) == 3 && parts[0] == "labs" && len(parts[1]) > 3 && parts[1][2] == '_' {
		return parts[1], true
	}
	return "", false
}

// Files lists the course's files that a lab is built from and that
// `playground init` writes: everything but the helper packages' own tests.
func (c *Course) Files() ([]string, error) {
	c.once.Do(c.load)
	return c.files, c.err
}

func (c *Course) load() {
	h := sha256.New()
	c.err = fs.WalkDir(c.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, inLab := labFolder(p); !inLab && strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := fs.ReadFile(c.fsys, p)
		if err != nil {
			return err
		}
		c.files = append(c.files, p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		return nil
	})
	if c.err != nil {
		c.err = fmt.Errorf("read the course: %w", c.err)
	}
	slices.Sort(c.files)
	c.hash = hex.EncodeToString(h.Sum(nil))
}

// Hash names the course's content: 16 hex digits that change whenever a
// file of it does.
func (c *Course) Hash() string {
	if _, err := c.Files(); err != nil || len(c.hash) < 16 {
		return "unknown"
	}
	return c.hash[:16]
}

// Labs lists the ids of the course's labs.
func (c *Course) Labs() []string {
	files, _ := c.Files()
	var ids []string
	for _, f := range files {
		if id, ok := labFolder(f); ok && path.Base(f) == "lab.yaml" {
			ids = append(ids, id)
		}
	}
	return ids
}

// StubFiles names the learner's files of a lab (the .go files of its
// folder that are not tests), and TestFiles the course's test files.
func (c *Course) StubFiles(lab string) []string { return c.labGo(lab, false) }

// TestFiles names the course's test files of a lab.
func (c *Course) TestFiles(lab string) []string { return c.labGo(lab, true) }

func (c *Course) labGo(lab string, tests bool) []string {
	files, _ := c.Files()
	var out []string
	for _, f := range files {
		if id, ok := labFolder(f); ok && id == lab && strings.HasSuffix(f, ".go") && strings.HasSuffix(f, "_test.go") == tests {
			out = append(out, path.Base(f))
		}
	}
	return out
}

// BuildOnly reports whether the course file p (slash-separated) is one
// that lab runs build in Dir but a learner's folder never gets: the
// replica programs and their harness (internal/labrun/...), which must
// match the binary that drives them wherever the learner's code is, and
// the reference solutions (solutions/...) explore compares with, and the
// guard program grading starts (internal/grade/guard...). WriteTo leaves
// them out and CheckCheckout does not hold them to git's copies: no lab
// is built from them.
func BuildOnly(p string) bool {
	return strings.HasPrefix(p, "internal/labrun/") || strings.HasPrefix(p, "solutions/") ||
		strings.HasPrefix(p, "internal/grade/guard")
}

// WriteTo writes the course's files into dir, which must exist: what a
// learner's folder holds (`playground init`), without the build-only
// files (BuildOnly).
func (c *Course) WriteTo(dir string) error { return c.write(dir, false) }

// write writes the course's files into dir, the build-only ones too when
// all is set (Dir).
func (c *Course) write(dir string, all bool) error {
	files, err := c.Files()
	if err != nil {
		return err
	}
	for _, f := range files {
		if !all && BuildOnly(f) {
			continue
		}
		data, err := fs.ReadFile(c.fsys, f)
		if err != nil {
			return fmt.Errorf("read the course: %w", err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("write the course: %w", err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("write the course: %w", err)
		}
	}
	return nil
}

// Dir is a folder holding the course's files as a module, where its labs
// and the labs' replica programs are built: in the cache folder, named by
// the course's content, so that the go command's caches keep working from
// one grading (and one run of the program) to the next. It is written
// when missing, build-only files included (BuildOnly); the learner never
// edits it.
func (c *Course) Dir() (string, error) {
	c.dirMu.Lock()
	defer c.dirMu.Unlock()
	if _, err := c.Files(); err != nil {
		return "", err
	}
	base := courseCacheDir()
	dir := filepath.Join(base, c.hash[:16])
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("course build folder: %w", err)
	}
	tmp, err := os.MkdirTemp(base, "new-")
	if err != nil {
		return "", fmt.Errorf("course build folder: %w", err)
	}
	if err := c.write(tmp, true); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	// Renamed whole, so a folder under its final name is complete.
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr != nil {
			return "", fmt.Errorf("course build folder: %w", err)
		}
	}
	return dir, nil
}

// courseCacheDir is where Dir writes: beside the kept test binaries.
func courseCacheDir() string {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		return filepath.Join(dir, "course")
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "playground", "course")
	}
	return filepath.Join(os.TempDir(), "playground-course")
}

// sealed reports whether the course's harness writes the sealed report
// (labs/internal/labtest); a test fixture without it is graded from its
// output alone.
func (c *Course) sealed() bool {
	_, err := fs.Stat(c.fsys, "labs/internal/labtest/seal.go")
	return err == nil
}

// A Submission is the learner's part of a lab: the contents of its stub
// files, by file name (cas.go). It is all a grading takes from the
// learner; `class verify` builds one from a submitted file.
type Submission struct {
	Lab   string
	Files map[string][]byte
}

// ErrNoSuchLab is returned for a lab id the course does not have.
var ErrNoSuchLab = errors.New("grade: no such lab in the course")

// Prepare checks sub and returns the options that grade it with the
// course: the course's module (Dir), the learner's files put in by an
// overlay, the sealed report on. base gives the rest (Env, Timeout, ...).
// Call cleanup once the grading is done. A file a lab may not have or
// that does what a lab may not do is a *RefusedError.
func (c *Course) Prepare(sub Submission, base Options) (o Options, cleanup func(), err error) {
	stubs := c.StubFiles(sub.Lab)
	if len(stubs) == 0 {
		return Options{}, nil, fmt.Errorf("%w: %s", ErrNoSuchLab, sub.Lab)
	}
	if ref := c.refusals(sub, stubs); len(ref) > 0 {
		return Options{}, nil, &RefusedError{Lab: sub.Lab, Refusals: ref}
	}
	dir, err := c.Dir()
	if err != nil {
		return Options{}, nil, err
	}
	tmp, err := os.MkdirTemp("", "playground-submission-")
	if err != nil {
		return Options{}, nil, fmt.Errorf("grade lab %s: %w", sub.Lab, err)
	}
	cleanup = func() { os.RemoveAll(tmp) }
	o = base
	o.Dir, o.Lab, o.Pkg, o.Seal = dir, sub.Lab, "", c.sealed()
	o.Overlay = map[string]string{}
	for _, name := range stubs {
		file := filepath.Join(tmp, name)
		if err := os.WriteFile(file, sub.Files[name], 0o644); err != nil {
			cleanup()
			return Options{}, nil, fmt.Errorf("grade lab %s: %w", sub.Lab, err)
		}
		o.Overlay[filepath.Join("labs", sub.Lab, name)] = file
	}
	// The course's go.mod is complete; a GOFLAGS=-mod=mod of the
	// learner's must not let the go command fetch or change anything.
	o.Env = append(slices.Clip(o.Env), "GOFLAGS=-mod=readonly")
	return o, cleanup, nil
}

// refusals checks that sub has exactly the lab's stub files and that each
// is one a lab may have.
func (c *Course) refusals(sub Submission, stubs []string) []Refusal {
	var out []Refusal
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range sub.Files {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		rel := path.Join("labs", sub.Lab, name)
		if !slices.Contains(stubs, name) {
			out = append(out, Refusal{File: rel, Why: fmt.Sprintf("not part of the lab: only %s is graded (move what this file holds into it, or delete the file)", strings.Join(stubs, ", "))})
			continue
		}
		out = append(out, CheckLabFile(sub.Lab, rel, sub.Files[name])...)
	}
	for _, name := range stubs {
		if _, ok := sub.Files[name]; !ok {
			out = append(out, Refusal{File: path.Join("labs", sub.Lab, name), Why: "missing: this is the file you write the lab in (git checkout -- it brings back the stub)"})
		}
	}
	return out
}
