package cli

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// withTestLabs replaces the built-in lab catalogue with a one-lab
// fixture, so tests of other courses do not change as labs are added.
func withTestLabs(t *testing.T) {
	saved := labCatalog
	labCatalog = func() fs.FS { return os.DirFS("../../lessons/testdata/labs") }
	t.Cleanup(func() { labCatalog = saved })
}

// TestCheckEmbeddedCourse is the gate on the shipped course: `playground
// check` must find nothing wrong with it.
func TestCheckEmbeddedCourse(t *testing.T) {
	code, out, errOut := run(t, "", "check")
	// The counts change as lessons are added; the verdict is what matters.
	if code != 0 || !strings.HasPrefix(out, "ok: ") || !strings.HasSuffix(out, "no problems\n") || errOut != "" {
		t.Errorf("check exited %d\n%s%s", code, out, errOut)
	}
}

func TestCheckFolder(t *testing.T) {
	withTestLabs(t)
	code, out, _ := run(t, "", "check", "../../content/testdata/course-ok")
	if code != 0 || out != "ok: 2 lessons, 5 questions, 1 lab, no problems\n" {
		t.Errorf("check course-ok exited %d:\n%s", code, out)
	}
	// --content names the course too.
	code, out, _ = run(t, "", "--content", "../../content/testdata/course-ok", "check")
	if code != 0 || !strings.HasPrefix(out, "ok: 2 lessons") {
		t.Errorf("--content course-ok check exited %d:\n%s", code, out)
	}
}

func TestCheckProblems(t *testing.T) {
	withTestLabs(t)
	code, out, _ := run(t, "", "check", "../../content/testdata/course-bad")
	dir := "../../content/testdata/course-bad/lessons/01-broken/"
	want := dir + `lesson.md:6: front matter: experiments: unknown experiment "no-such-experiment" (known: ` +
		strings.Join(knownExperiments(), ", ") + ")\n" +
		dir + "lesson.md:13: @check missing-question: no question with this id in the lesson's quiz.yaml\n" +
		dir + "quiz.yaml:7: question q: options: a single question needs exactly one option with correct: true, has 0\n" +
		"3 problems found (course: 1 lesson, 1 question, 1 lab)\n"
	if code != 2 || out != want {
		t.Errorf("check course-bad exited %d:\n%s\nwant:\n%s", code, out, want)
	}
}

func TestCheckUsage(t *testing.T) {
	if code, _, errOut := run(t, "", "check", "a", "b"); code != 2 || !strings.Contains(errOut, "at most one folder") {
		t.Errorf("two folders: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "", "check", "testdata/no-such-course"); code != 1 || !strings.Contains(errOut, "open course") {
		t.Errorf("missing folder: exit %d, %q", code, errOut)
	}
}

func TestKnownExperiments(t *testing.T) {
	names := knownExperiments()
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("%s listed twice", n)
		}
		seen[n] = true
	}
	if len(names) != 14 {
		t.Errorf("%d experiment names, the course has 14", len(names))
	}
}

// A page longer than two 80x24 screens is a warning in a course of one's
// own (check still passes), and the originality scan runs against the
// documents given with --seeds.
func TestCheckLongPageAndSeeds(t *testing.T) {
	withTestLabs(t)
	dir := "../../content/testdata/course-long"
	code, out, _ := run(t, "", "check", dir)
	if code != 0 || !strings.Contains(out, "warning: "+dir+"/lessons/01-first-steps/lesson.md:") ||
		!strings.Contains(out, `"A page that scrolls" is `) || !strings.HasSuffix(out, "no problems (1 warning)\n") {
		t.Errorf("check course-long exited %d:\n%s", code, out)
	}
	seeds := t.TempDir()
	doc := "Paragraph 7 of a page far too long for two screens, said the source."
	if err := os.WriteFile(seeds+"/seed.txt", []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, "", "check", "--seeds", seeds, dir)
	if code != 2 || !strings.Contains(out, "words in a row are the same as in source document seed.txt") {
		t.Errorf("check --seeds exited %d:\n%s", code, out)
	}
	if code, _, errOut := run(t, "", "check", "--seeds"); code != 2 || !strings.Contains(errOut, "--seeds needs a folder") {
		t.Errorf("--seeds without a folder: exit %d, %q", code, errOut)
	}
}
