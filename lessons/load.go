package lessons

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/ownership-election/playground/quiz"
)

// folderPattern is a lesson folder name: two digits, a dash, the slug.
var folderPattern = regexp.MustCompile(`^([0-9]{2})-([a-z0-9]+(?:-[a-z0-9]+)*)$`)

// Load reads and validates a whole course. It returns the course as far as
// it could be read (lessons ordered by folder number, labs by id) and
// every problem found; a course with problems still loads, so a reader can
// show what is there. The TUI should refuse nothing but report problems;
// `playground check` fails on any.
func Load(src Sources) (*Course, []Problem) {
	c, probs := read(src, false)
	probs = append(probs, crossCheck(c, src)...)
	probs = append(probs, quizCheck(c, src)...)
	// Group problems by file, in line order, as compilers do.
	sort.SliceStable(probs, func(i, j int) bool {
		if probs[i].Path != probs[j].Path {
			return probs[i].Path < probs[j].Path
		}
		return probs[i].Line < probs[j].Line
	})
	return c, probs
}

// Outline reads only the lessons' lesson.md files (front matter and
// pages), in course order: enough to draw a course map. Quizzes, labs and
// the checks across files are Load's; a program that shows the map first
// loads the whole course after (the TUI does so in the background after
// its first frame). Problems are left to Load as well.
func Outline(src Sources) *Course {
	c, _ := read(src, true)
	return c
}

// read loads the files of a course (only lesson.md files when outline);
// Load adds the checks across files.
func read(src Sources, outline bool) (*Course, []Problem) {
	c := &Course{ExperimentTitles: src.ExperimentTitles}
	var probs []Problem
	report := func(p ...Problem) { probs = append(probs, p...) }
	cpath := func(p string) string { return joinRoot(src.CourseRoot, p) }

	entries, err := fs.ReadDir(src.Course, "lessons")
	if err != nil {
		report(Problem{Path: cpath("lessons"), Msg: "cannot read the lessons folder: " + err.Error()})
	}
	// Lessons and labs are read and parsed in parallel: the TUI loads the
	// course before its first frame, so this is on the startup path.
	type loaded struct {
		num    int
		slug   string
		lesson *Lesson
		probs  []Problem
	}
	var (
		wg      sync.WaitGroup
		results []*loaded
	)
	numbers := map[int]string{}
	for _, e := range entries {
		if !e.IsDir() || e.Name()[0] == '.' {
			continue
		}
		dir := path.Join("lessons", e.Name())
		m := folderPattern.FindStringSubmatch(e.Name())
		if m == nil {
			report(Problem{Path: cpath(dir), Msg: "lesson folder name must be NN-slug, like 05-fencing-tokens"})
			continue
		}
		num, _ := strconv.Atoi(m[1])
		if other, dup := numbers[num]; dup {
			report(Problem{Path: cpath(dir), Msg: "lesson number " + m[1] + " is also used by " + other})
		}
		numbers[num] = e.Name()
		r := &loaded{num: num, slug: m[2]}
		results = append(results, r)
		wg.Go(func() { r.lesson, r.probs = loadLesson(src.Course, dir, cpath, outline) })
	}
	var (
		labs     []*Lab
		labProbs []Problem
	)
	if src.Labs != nil && !outline {
		wg.Go(func() { labs, labProbs = loadLabs(src.Labs, src.LabsRoot) })
	}
	wg.Wait()
	for _, r := range results {
		report(r.probs...)
		l := r.lesson
		if l == nil {
			continue
		}
		l.Number = r.num
		renameExperiments(l, src.RenamedExperiments)
		if l.ID != "" && l.ID != r.slug {
			report(Problem{Path: l.Path, Line: l.line("id", ""), Msg: "front matter: id " + strconv.Quote(l.ID) +
				" must match the folder name without its number, " + strconv.Quote(r.slug)})
		}
		c.Lessons = append(c.Lessons, l)
	}
	sort.SliceStable(c.Lessons, func(i, j int) bool { return c.Lessons[i].Number < c.Lessons[j].Number })
	c.Labs = labs
	report(labProbs...)
	return c, probs
}

func joinRoot(root, p string) string {
	if root == "" {
		return p
	}
	return path.Join(root, p)
}

// loadLesson reads lesson.md and quiz.yaml of one folder.
func loadLesson(fsys fs.FS, dir string, cpath func(string) string, outline bool) (*Lesson, []Problem) {
	var probs []Problem
	// A misnamed file (quiz.yml, Lesson.md) would otherwise be ignored
	// silently, so anything else in a lesson folder is reported.
	if entries, err := fs.ReadDir(fsys, dir); err == nil {
		for _, e := range entries {
			if n := e.Name(); n != "lesson.md" && n != "quiz.yaml" && n[0] != '.' {
				probs = append(probs, Problem{Path: cpath(path.Join(dir, n)),
					Msg: "unexpected file: a lesson folder holds lesson.md and quiz.yaml only"})
			}
		}
	}
	mdPath := path.Join(dir, "lesson.md")
	data, err := readRegular(fsys, mdPath)
	if err != nil {
		return nil, []Problem{{Path: cpath(mdPath), Msg: "cannot read lesson: " + readErr(err)}}
	}
	probs = append(probs, utf8Problems(cpath(mdPath), data)...)
	l, ps := ParseLesson(cpath(mdPath), data)
	probs = append(probs, ps...)
	l.Dir = dir
	if outline {
		return l, probs
	}
	qPath := path.Join(dir, "quiz.yaml")
	qdata, err := readRegular(fsys, qPath)
	if err != nil {
		probs = append(probs, Problem{Path: cpath(qPath), Msg: "cannot read the lesson's quiz: " + readErr(err)})
		return l, probs
	}
	probs = append(probs, utf8Problems(cpath(qPath), qdata)...)
	qz, qps := quiz.Parse(cpath(qPath), qdata)
	probs = append(probs, qps...)
	l.Quiz = qz
	if qz != nil && l.QuizID != "" && qz.ID != "" && qz.ID != l.QuizID {
		probs = append(probs, Problem{Path: l.Path, Line: l.line("quiz", ""),
			Msg: "front matter: quiz " + strconv.Quote(l.QuizID) + " does not match the id " +
				strconv.Quote(qz.ID) + " in quiz.yaml"})
	}
	return l, probs
}

// readRegular reads a course file, refusing anything but a regular file
// (after symlinks): opening a named pipe would wait forever for a writer,
// and a device could be endless.
func readRegular(fsys fs.FS, name string) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path.Base(name), fileKind(st.Mode()))
	}
	return fs.ReadFile(fsys, name)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// utf8Problems reports the lines of a course file that are not valid
// UTF-8 (the first few, then how many more), so `check` names the place
// rather than the reader showing replacement characters.
func utf8Problems(p string, data []byte) []Problem {
	if utf8.Valid(data) {
		return nil
	}
	var probs []Problem
	bad := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		if utf8.Valid(line) {
			continue
		}
		if bad++; bad <= 3 {
			probs = append(probs, Problem{Path: p, Line: i + 1, Msg: "invalid UTF-8: the file must be saved as UTF-8 text"})
		}
	}
	if bad > 3 {
		probs = append(probs, Problem{Path: p, Line: 1, Msg: fmt.Sprintf("%d more lines with invalid UTF-8", bad-3)})
	}
	return probs
}

func readErr(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "file not found"
	}
	return err.Error()
}
