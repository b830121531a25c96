package grade

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestCheckLabFile(t *testing.T) {
	cases := []struct {
		name, src, want string // want "" means no refusal
	}{
		{"clean", "package cas\n\nimport \"errors\"\n\nvar E = errors.New(\"x\")\n", ""},
		{"exit", "package cas\n\nimport \"os\"\n\nfunc f() { os.Exit(0) }\n", "x.go:5: calls os.Exit"},
		{"exit as a value", "package cas\n\nimport \"os\"\n\nvar f = os.Exit\n", "x.go:5: calls os.Exit"},
		{"renamed os", "package cas\n\nimport sys \"os\"\n\nfunc init() { sys.Exit(0) }\n", "x.go:5: calls os.Exit"},
		{"start process", "package cas\n\nimport \"os\"\n\nvar f = os.StartProcess\n", "x.go:5: calls os.StartProcess"},
		{"unsafe", "package cas\n\nimport \"unsafe\"\n\nvar _ = unsafe.Sizeof(1)\n", "x.go:3: imports unsafe"},
		{"syscall", "package cas\n\nimport \"syscall\"\n\nvar _ = syscall.Getpid\n", "x.go:3: imports syscall"},
		{"os/exec", "package cas\n\nimport (\n\t\"os/exec\"\n)\n\nvar _ = exec.Command\n", "x.go:4: imports os/exec"},
		{"x/sys", "package cas\n\nimport \"golang.org/x/sys/unix\"\n\nvar _ = unix.Exit\n", "x.go:3: imports golang.org/x/sys"},
		{"harness", "package cas\n\nimport \"github.com/ownership-election/playground/labs/internal/labtest\"\n\nvar _ = labtest.InitBudget\n", "x.go:3: imports the grader's harness"},
		{"linkname", "package cas\n\nimport _ \"unsafe\"\n\n//go:linkname f runtime.exit\nfunc f(int32)\n", "x.go:5: uses //go:linkname"},
		{"dot import", "package cas\n\nimport . \"os\"\n\nvar _ = Getpid\n", "x.go:3: imports \"os\" with a dot"},
		{"not Go", "package cas\n\nfunc {", ""},
		{"os for a debug print", "package cas\n\nimport \"os\"\n\nfunc f() { os.Stderr.WriteString(\"x\") }\n", "x.go:3: imports os: it opens files, reads other processes and ends the test binary; for a debug print use log or fmt"},
		{"cgi starts programs", "package cas\n\nimport \"net/http/cgi\"\n\nvar _ cgi.Handler\n", "x.go:3: imports net/http/cgi: the etcd client brings its own networking"},
		{"flag", "package cas\n\nimport \"flag\"\n\nvar _ = flag.Parse\n", "x.go:3: imports flag"},
		{"reflect", "package cas\n\nimport \"reflect\"\n\nvar _ = reflect.TypeOf\n", "x.go:3: imports reflect"},
		{"runtime/debug", "package cas\n\nimport \"runtime/debug\"\n\nvar _ = debug.SetGCPercent\n", "x.go:3: imports runtime/debug: a lab does not reach into the runtime"},
		{"off the list", "package cas\n\nimport \"encoding/json\"\n\nvar _ = json.Marshal\n", "x.go:3: imports encoding/json: it is not among the packages this lab needs (lab 01_cas's README"},
		{"etcd in a lab without it", "package cas\n\nimport clientv3 \"go.etcd.io/etcd/client/v3\"\n\nvar _ *clientv3.Client\n", "x.go:3: imports go.etcd.io/etcd/client/v3"},
		{"log and fmt", "package cas\n\nimport (\n\t\"fmt\"\n\t\"log\"\n)\n\nfunc f() { log.Print(fmt.Sprint(1)) }\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, r := range CheckLabFile("01_cas", "x.go", []byte(c.src)) {
				got = append(got, r.String())
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("refused %q", got)
			case c.want != "" && !strings.Contains(strings.Join(got, "\n"), c.want):
				t.Errorf("refusals %q, want one with %q", got, c.want)
			}
		})
	}
}

// A refusal that rejects a correct solution is as wrong as a missing one.
func TestSolutionsPassTheLabFileCheck(t *testing.T) {
	files, _ := filepath.Glob("../../solutions/*/*.go")
	if len(files) < 9 {
		t.Fatalf("found %d solution files", len(files))
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if r := CheckLabFile(filepath.Base(filepath.Dir(f)), f, src); len(r) > 0 {
			t.Errorf("%s refused: %v", f, r)
		}
	}
}

// The embedded course must hold every package of this module that a lab's
// tests build, or a lab graded from it (or a folder `playground init`
// wrote) would not compile.
func TestCourseHoldsEveryPackageTheLabsNeed(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{.Dir}}", "../../labs/0...", "../../labs/internal/etcdserver").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, _ := filepath.Abs("../..")
	files, err := Builtin().Files()
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, f := range files {
		dirs[path.Dir(f)] = true
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // the standard library or another module
		}
		if !dirs[filepath.ToSlash(rel)] {
			t.Errorf("the labs build %s, which the course does not embed (kit.go)", rel)
		}
	}
	for _, f := range files {
		if _, inLab := labFolder(f); !inLab && strings.HasSuffix(f, "_test.go") {
			t.Errorf("%s: a helper's own test is in the course's files", f)
		}
	}
}

// The replica programs, their harness and the reference solutions are
// built in the course's build folder but never written into a learner's
// folder; the stubs' sums are written into both (a lab run reads them to
// tell a stub from written code). A fixture course shows the rule itself,
// the built-in one that it holds these files.
func TestBuildOnlyFilesStayInTheBuildFolder(t *testing.T) {
	c := NewCourse(fstest.MapFS{
		"go.mod":                             {Data: []byte("module " + ModulePath + "\n")},
		"labs/stubs.sum":                     {Data: []byte("# none\n")},
		"labs/07_election/election.go":       {Data: []byte("package election\n")},
		"internal/labrun/replica/r.go":       {Data: []byte("package replica\n")},
		"internal/labrun/election07/main.go": {Data: []byte("package main\n")},
		"solutions/07_election/election.go":  {Data: []byte("package election // solved\n")},
	})
	t.Setenv(CacheDirEnv, t.TempDir())
	learner := t.TempDir()
	if err := c.WriteTo(learner); err != nil {
		t.Fatal(err)
	}
	build, err := c.Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "labs/stubs.sum", "labs/07_election/election.go", "internal/labrun/replica/r.go", "internal/labrun/election07/main.go", "solutions/07_election/election.go"} {
		_, inLearner := os.Stat(filepath.Join(learner, f))
		if _, err := os.Stat(filepath.Join(build, f)); err != nil {
			t.Errorf("the build folder has no %s", f)
		}
		if want := !BuildOnly(f); (inLearner == nil) != want {
			t.Errorf("%s in the learner's folder: %v, want %v", f, inLearner == nil, want)
		}
	}
	files, err := Builtin().Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"labs/stubs.sum", "internal/labrun/replica/replica.go", "internal/labrun/election07/main.go", "solutions/07_election/election.go"} {
		if !slices.Contains(files, f) {
			t.Errorf("the built-in course does not hold %s (kit.go)", f)
		}
	}
}

func TestCourseLabFiles(t *testing.T) {
	c := Builtin()
	if got := c.StubFiles("01_cas"); !slices.Equal(got, []string{"cas.go"}) {
		t.Errorf("stub files of 01_cas = %q", got)
	}
	if got := c.TestFiles("01_cas"); !slices.Contains(got, "cas_test.go") || !slices.Contains(got, "main_test.go") {
		t.Errorf("test files of 01_cas = %q", got)
	}
	if len(c.Labs()) < 9 {
		t.Errorf("labs = %q", c.Labs())
	}
}

// fakeCheckout is a checkout with only what grading reads: go.mod and the
// lab's folder.
func fakeCheckout(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.mod"] = "module " + ModulePath + "\n"
	for name, src := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestFromCheckoutTakesOnlyTheStub(t *testing.T) {
	root := fakeCheckout(t, map[string]string{
		"labs/01_cas/cas.go":      "package cas\n",
		"labs/01_cas/cas_test.go": "package cas\n// emptied\n",
		"labs/01_cas/notes.md":    "mine",
	})
	sub, err := Builtin().FromCheckout(root, "01_cas", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Files) != 1 || string(sub.Files["cas.go"]) != "package cas\n" {
		t.Errorf("submission = %q", sub.Files)
	}
	_, _, err = Builtin().Prepare(sub, Options{})
	if err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(t.TempDir(), "zz.go")
	os.WriteFile(extra, []byte("package cas\n"), 0o644)
	sub, err = Builtin().FromCheckout(root, "01_cas", map[string]string{"labs/01_cas/zz_helpers.go": extra})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Builtin().Prepare(sub, Options{})
	if re, ok := err.(*RefusedError); !ok || len(re.Refusals) != 1 || re.Refusals[0].File != "labs/01_cas/zz_helpers.go" {
		t.Errorf("an extra file: %v, want it refused by name", err)
	}
	_, _, err = Builtin().Prepare(Submission{Lab: "01_cas", Files: map[string][]byte{}}, Options{})
	if re, ok := err.(*RefusedError); !ok || !strings.Contains(re.Error(), "labs/01_cas/cas.go: missing") {
		t.Errorf("no stub: %v", err)
	}
}

// A program built from edited tests (go run embeds the working tree) is
// refused against git's copy; one built from the committed files is not.
func TestCheckCheckoutAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	if err := Builtin().WriteTo(root); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "course")
	if err := Builtin().CheckCheckout(root); err != nil {
		t.Fatalf("the committed course: %v", err)
	}
	edited := fstest.MapFS{}
	fs.WalkDir(Builtin().fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := fs.ReadFile(Builtin().fsys, p)
			edited[p] = &fstest.MapFile{Data: data}
		}
		return nil
	})
	edited["labs/01_cas/cas_test.go"] = &fstest.MapFile{Data: []byte("package cas\n")}
	edited["labs/01_cas/cas.go"] = &fstest.MapFile{Data: []byte("package cas\n// a learner's stub\n")}
	err := NewCourse(edited).CheckCheckout(root)
	re, ok := err.(*RefusedError)
	if !ok || len(re.Refusals) != 1 || re.Refusals[0].File != "labs/01_cas/cas_test.go" {
		t.Fatalf("edited tests: %v, want cas_test.go refused alone", err)
	}
	if !strings.Contains(re.Error(), "git checkout HEAD -- labs/01_cas/cas_test.go") {
		t.Errorf("the refusal does not say how to restore: %v", re)
	}
}

// sealedRun grades lab 01 from the course with its reference
// solution, with src added to it in the overlaid stub (past the lab
// file check, as a learner who found a way around it would).
func sealedRun(t *testing.T, src string) *Result {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Setenv(CacheDirEnv, t.TempDir())
	sol, err := os.ReadFile("../../solutions/01_cas/cas.go")
	if err != nil {
		t.Fatal(err)
	}
	o, cleanup, err := Builtin().Prepare(Submission{Lab: "01_cas", Files: map[string][]byte{"cas.go": sol}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if !o.Seal {
		t.Fatal("the built-in course is not sealed")
	}
	if src != "" {
		src = strings.Replace(string(sol), "import (", "import (\n\tfakefmt \"fmt\"\n\tfakeos \"os\"", 1) + src
		os.WriteFile(o.Overlay[filepath.Join("labs", "01_cas", "cas.go")], []byte(src), 0o644)
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSealedRunPassesTheSolution(t *testing.T) {
	res := sealedRun(t, "")
	if !res.Passed || res.sealed == nil || len(res.sealed.Tests) < 5 {
		t.Fatalf("passed %v, report %+v: %s", res.Passed, res.sealed, res.Message)
	}
}

// Output that claims a passing run (with test2json's marker, and a fake
// report line) followed by an exit: nothing passes.
func TestSealedRunIgnoresWhatTheCodePrints(t *testing.T) {
	steps := []string{"TestStep1_CreateWhenAbsent", "TestStep2_SwapOnlyWhenEqual", "TestStep3_VersionIncreasesOnEveryWrite", "TestStep4_ExpiryMakesKeyAbsent", "TestStep5_ConcurrentCreatesHaveOneWinner"}
	var b strings.Builder
	b.WriteString("\nfunc init() {\n")
	for _, s := range steps {
		b.WriteString("\tfakefmt.Print(\"\\x16=== RUN   " + s + "\\n\\x16--- PASS: " + s + " (0.00s)\\n\")\n")
	}
	b.WriteString("\tfakefmt.Println(\"\\x16PASS\")\n")
	b.WriteString("\tfakefmt.Println(\"" + sealPrefix + "eyJjb2RlIjowLCJ0ZXN0cyI6W119 00\")\n")
	b.WriteString("\tfakeos.Exit(0)\n}\n")
	res := sealedRun(t, b.String())
	if res.Passed {
		t.Fatalf("a faked run passed: %+v", res)
	}
	for _, tt := range res.Tests {
		if tt.Status == Pass {
			t.Errorf("%s counted as passed", tt.Name)
		}
	}
	if res.Message != noReport {
		t.Errorf("message %q, want %q", res.Message, noReport)
	}
}

// A learner's stub that does not compile is graded from a copy of it, but
// the compiler's message names the file the learner edits, and the
// failure is the learner's code's, not "not gradable".
func TestCompileErrorNamesTheLearnersFile(t *testing.T) {
	res := sealedRun(t, "\nfunc broken() { undefinedThing() }\n")
	if !res.BuildFailed || len(res.BuildErrors) == 0 {
		t.Fatalf("want a build failure, got %+v", res)
	}
	if f := res.BuildErrors[0].File; f != "labs/01_cas/cas.go" {
		t.Errorf("the error names %s, want labs/01_cas/cas.go", f)
	}
	if !strings.HasPrefix(res.Message, "does not compile: labs/01_cas/cas.go:") {
		t.Errorf("message %q", res.Message)
	}
	if why := NotGradable(&Report{Lab: "01_cas", Result: res}, nil); why != "" {
		t.Errorf("a compile error in the stub called not gradable: %s", why)
	}
}

// The go command names a file by its path relative to its own folder
// when that is shorter than the absolute one (a TMPDIR beside the
// course's build folder, as in the CLI's scripts): that form of the
// submission's copy is put back to the learner's file name too.
func TestOverlaidNamesRelativeToDir(t *testing.T) {
	root := filepath.Join(string(filepath.Separator), "home", "a-learner-with-a-long-name", "work")
	o := Options{
		Dir:     filepath.Join(root, ".cache", "playground", "course", "0123abcd"),
		Overlay: map[string]string{filepath.Join("labs", "01_cas", "cas.go"): filepath.Join(root, "tmp", "playground-submission-1", "cas.go")},
	}
	rel := filepath.Join("..", "..", "..", "..", "tmp", "playground-submission-1", "cas.go")
	abs := filepath.Join(root, "tmp", "playground-submission-1", "cas.go")
	for _, printed := range []string{rel, abs} {
		got := o.overlaidNames().Replace(printed + ":6:1: syntax error: unexpected }")
		if want := "labs/01_cas/cas.go:6:1: syntax error: unexpected }"; got != want {
			t.Errorf("%s put back as %q, want %q", printed, got, want)
		}
	}
}

// TestNotGradableSaysTheBuildRanOutOfTime: a grading the backstop stopped
// before any test binary started is not the learner's fault, and says it
// was the build's time, not "(no output)".
func TestNotGradableSaysTheBuildRanOutOfTime(t *testing.T) {
	res := newResult()
	res.TimedOut = true
	res.Message = "timed out: go test did not finish within 3m25s and was stopped"
	why := NotGradable(&Report{Lab: "01_cas", Result: res}, nil)
	if !strings.HasPrefix(why, "the build did not finish in time: ") || !strings.Contains(why, "3m25s") {
		t.Fatalf("NotGradable = %q", why)
	}
}
