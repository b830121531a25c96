package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ownership-election/playground/content"
	"github.com/ownership-election/playground/labs"
	"github.com/ownership-election/playground/lessons"
)

// labCatalog gives the lab manifests (<id>/lab.yaml, README.md, the stub
// and *_test.go) that lessons refer to. A variable so tests can swap it.
var labCatalog func() fs.FS = labs.Catalog

func init() {
	Register(&Command{
		Name:    "check",
		Usage:   "check [--seeds DIR] [DIR]",
		Summary: "validate the course (built-in, or the one in DIR); exit 2 on any problem",
		Help: `Checks every lesson, quiz and lab manifest and prints each problem as
FILE:LINE: message. DIR is a course folder (with lessons/ in it); without
it the built-in course is checked.

Beyond the files' own rules, every page of the built-in course must fit
two 80x24 screens (44 lines at 76 columns as the reader renders it,
checkpoints and links included; for
another course a longer page is a warning), and no lesson or quiz may
share a run of 8 words with the course's source documents (scanned
against fingerprints kept in the binary, or against the .txt files of
--seeds DIR, for any course).

Exit codes: 0 no problems, 1 the course could not be opened, 2 problems
found or bad usage, 130/143 stopped by Ctrl-C or SIGTERM.`,
		Run: runCheck,
	})
}

// loadCourse loads the course in dir, or the --content folder, or the
// embedded one, with the lab catalogue and the known experiments.
func loadCourse(env *Env, dir string) (*lessons.Course, []lessons.Problem, error) {
	src, err := courseSources(env, dir)
	if err != nil {
		return nil, nil, err
	}
	c, probs := lessons.Load(src)
	return c, probs, nil
}

// courseSources says where the course in dir, or the --content folder, or
// the embedded one comes from, with the lab catalogue and the known
// experiments.
func courseSources(env *Env, dir string) (lessons.Sources, error) {
	src := content.Sources()
	src.Labs = labCatalog()
	src.Experiments, src.ExperimentTitles = knownExperiments(), experimentTitles()
	src.RenamedExperiments = renamedExperiments()
	if dir == "" {
		dir = env.ContentDir
	}
	if dir != "" {
		st, err := os.Stat(dir)
		if err != nil {
			return src, fmt.Errorf("open course: %w", err)
		}
		if !st.IsDir() {
			return src, fmt.Errorf("open course: %s is not a folder", dir)
		}
		// The built-in labs may serve another course, but belong to this
		// one; so does the built-in course's quiz floor.
		src.Course, src.CourseRoot, src.OwnLabs, src.QuizFloor = os.DirFS(dir), dir, false, 0
	}
	return src, nil
}

// runCheck prints every problem as path:line: message and a summary.
// Exit codes: 0 no problems, 2 problems found (or bad usage), 1 the course
// could not be opened at all.
func runCheck(ctx context.Context, env *Env, args []string) error {
	dir, seeds, err := checkArgs(args)
	if err != nil {
		return err
	}
	src, err := courseSources(env, dir)
	if err != nil {
		return err
	}
	c, probs := lessons.Load(src)
	more, warns, err := courseChecks(c, src, dir == "" && env.ContentDir == "", seeds)
	if err != nil {
		return err
	}
	probs = append(probs, more...)
	for _, p := range warns {
		fmt.Fprintln(env.Stdout, "warning: "+p.String())
	}
	for _, p := range probs {
		fmt.Fprintln(env.Stdout, p.String())
	}
	if len(probs) > 0 {
		fmt.Fprintf(env.Stdout, "%s found (course: %s)\n", count(len(probs), "problem"), courseSize(c))
		return &ExitError{Code: 2}
	}
	fmt.Fprintf(env.Stdout, "ok: %s, no problems%s\n", courseSize(c), warnSuffix(len(warns)))
	return nil
}

// checkArgs reads [--seeds DIR] [DIR].
func checkArgs(args []string) (dir, seeds string, err error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--seeds" || a == "-seeds":
			if i+1 == len(args) {
				return "", "", Usagef("--seeds needs a folder of source documents (.txt)")
			}
			seeds = args[i+1]
			i++
		case strings.HasPrefix(a, "--seeds="):
			seeds = strings.TrimPrefix(a, "--seeds=")
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) > 1 {
		return "", "", Usagef("takes at most one folder: check [--seeds DIR] [DIR]")
	}
	if len(rest) == 1 {
		dir = rest[0]
	}
	return dir, seeds, nil
}

// warnSuffix is ", 2 warnings" (or nothing).
func warnSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return " (" + count(n, "warning") + ")"
}

func courseSize(c *lessons.Course) string {
	return count(len(c.Lessons), "lesson") + ", " + count(c.QuestionCount(), "question") + ", " + count(len(c.Labs), "lab")
}

// count writes "1 lesson", "2 lessons".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
