package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/lessons"
)

func init() {
	Register(&Command{
		Name:    "grade",
		Usage:   "grade [--json] [--junit FILE] [--gradescope FILE] [LAB...]",
		Summary: "grade labs from the shell the way the lab screen does, and record passes",
		Help: `Grades each named lab (all of them without arguments) in the checkout
around the current folder: the steps' tests run once, and a lab whose
every step passed is then verified, 5 more runs under the race detector.
A lab counts as passed only once verified; a racy or flaky solution is
reported with the failing run's message. Passes are recorded in your
progress, as in the terminal interface.

Only the lab's own file (labs/01_cas/cas.go) comes from the checkout: the
tests, the harness, go.mod and go.sum are the course's copies built into
this program. Another .go file in a lab's folder, or a lab file that
imports a package not on its lab's list (the lab's README shows it: the
plain standard library, and etcd's client for the etcd labs; never os,
net, flag, reflect, runtime, unsafe, syscall or cgo), uses //go:linkname
or calls os.Exit, is refused with the line that does it. For a debug
print use log or fmt.

A LAB is its number in the course (3.1: lesson 3's first lab), its
folder (01_cas), the folder's number (01 or 1) or its name (cas).

  --json             print one JSON object per lab (steps, status,
                     message, duration) instead of text
  --junit FILE       also write JUnit XML to FILE: one test case per step,
                     with its points
  --gradescope FILE  also write Gradescope's results.json to FILE
  --submission FILE  grade FILE as the one named lab's file, outside any
                     checkout: only FILE is taken, the rest is the course
                     built into this program, and no pass is recorded
                     (class verify regrades submissions this way)

Every step is worth one point; it earns it when it passed and did not fail
in the verification. A lab that could not be graded for a reason that is
not the learner's (etcd did not start, the go command or its build cache
is broken) is reported as "not gradable", not as failing.

Exit codes: 0 every named lab passed, 1 some did not, 2 bad usage, 3 some
lab was not gradable, 4 every lab passed but a pass could not be saved in
your progress or sent to the class board (stderr says which), 130/143
stopped by Ctrl-C or SIGTERM.`,
		Run: runGrade,
	})
}

// gradeConfig is what a grading run needs beyond its flags; tests fill in
// Root and Overlay.
type gradeConfig struct {
	Root    string            // the checkout; "" to look around the working folder
	Overlay map[string]string // files of the checkout replaced (tests grade solutions this way)
	Now     func() time.Time
}

// gradeArgs is the command line of `grade`.
type gradeArgs struct {
	json       bool
	junit      string
	gradescope string
	submission string // a file graded as the lab's, outside a checkout
	names      []string
}

func runGrade(ctx context.Context, env *Env, args []string) error {
	if os.Getenv(regradeEnv) != "" {
		// class verify's child: everything the learner's code started,
		// even what left the supervisor's tree, ends with this process.
		defer grade.KeepDescendants()()
	}
	return gradeLabs(ctx, env, args, gradeConfig{})
}

// regradeEnv marks the `grade --submission` process that class verify
// starts: a process of its own, which may end all its descendants.
const regradeEnv = "PLAYGROUND_REGRADE"

// gradeLabs parses, grades each lab, records the passes and reports.
func gradeLabs(ctx context.Context, env *Env, args []string, cfg gradeConfig) error {
	a, err := parseGradeArgs(args)
	if err != nil {
		return err
	}
	g, err := newGrader(env, a, cfg)
	if err != nil {
		return err
	}
	defer g.close()
	if note := grade.SandboxNote(); note != "" {
		fmt.Fprintf(env.Stderr, "playground grade: no full sandbox: %s.\n", note)
	}
	// Ctrl-C or SIGTERM: end the grading's go test and test binary at
	// once, even if the command itself is not waited for.
	defer context.AfterFunc(ctx, grade.StopAll)()
	rep := newReporter(env.Stdout, a.json, g.course)
	var outs []*labOutcome
	for _, lab := range g.labs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rep.start(lab)
		out := g.gradeOne(ctx, lab, rep)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		g.record(ctx, out)
		if err := rep.done(out); err != nil {
			return err
		}
		outs = append(outs, out)
	}
	rep.summary(outs)
	if err := writeGradeFiles(a, outs); err != nil {
		return err
	}
	return gradeExit(outs)
}

func parseGradeArgs(args []string) (gradeArgs, error) {
	var a gradeArgs
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.BoolVar(&a.json, "json", false, "one JSON object per lab")
	fs.StringVar(&a.junit, "junit", "", "write JUnit XML to `FILE`")
	fs.StringVar(&a.gradescope, "gradescope", "", "write Gradescope's results.json to `FILE`")
	fs.StringVar(&a.submission, "submission", "", "grade `FILE` as the named lab's file, with the built-in course")
	names, err := parseFlags(fs, args)
	if err != nil {
		return a, err
	}
	a.names = names
	if a.submission != "" && len(names) != 1 {
		return a, Usagef("--submission grades one lab: name it (grade --submission FILE LAB)")
	}
	if a.submission != "" {
		if _, err := os.Stat(a.submission); err != nil {
			return a, Usagef("--submission: %v", err)
		}
	}
	// Fail now rather than after minutes of grading.
	for flagName, file := range map[string]string{"--junit": a.junit, "--gradescope": a.gradescope} {
		if file == "" {
			continue
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return a, Usagef("%s: %v", flagName, err)
		}
		f.Close()
	}
	return a, nil
}

// grader holds what grading the labs of one command shares.
type grader struct {
	env     *Env
	cfg     gradeConfig
	course  *lessons.Course
	labs    []*lessons.Lab
	kit     *grade.Course
	root    string
	etcd    embedetcd.Etcd
	etcdErr error
	progErr error
	prog    string
	// submission, when set, is the file graded as the lab's instead of
	// a checkout's (--submission).
	submission string
}

func newGrader(env *Env, a gradeArgs, cfg gradeConfig) (*grader, error) {
	course, _, err := loadCourse(env, "")
	if err != nil {
		return nil, err
	}
	labs, err := pickLabs(course, a.names)
	if err != nil {
		return nil, err
	}
	g := &grader{env: env, cfg: cfg, course: course, labs: labs, kit: grade.Builtin(), root: cfg.Root, submission: a.submission}
	if g.root == "" && g.submission == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("grade: %w", err)
		}
		if g.root = grade.FindRoot(wd); g.root == "" {
			return nil, errors.New("grade: not inside a checkout of the course (a folder whose go.mod is " + grade.ModulePath + " with labs/ in it); clone it, or make one with `playground init DIR`, and run playground grade there")
		}
	}
	if g.cfg.Now == nil {
		g.cfg.Now = time.Now
	}
	g.prog, g.progErr = progress.DefaultPath()
	return g, nil
}

func (g *grader) close() {
	if g.etcd != nil {
		g.etcd.Close()
	}
}

// labOutcome is how grading one lab ended: a report, a refusal of the
// lab's files, or a reason it could not be graded at all.
type labOutcome struct {
	Lab         *lessons.Lab
	Report      *grade.Report
	Refused     *grade.RefusedError
	NotGradable string
	// Unsaved: it passed, but the pass is not in the progress file or
	// not on the class board (stderr said which).
	Unsaved bool
}

// Passed reports a verified pass.
func (o *labOutcome) Passed() bool { return o.Report.Passed() }

// Status is the lab's status word in every report.
func (o *labOutcome) Status() string {
	switch {
	case o.Refused != nil:
		return "refused"
	case o.NotGradable != "":
		return "not-gradable"
	default:
		return string(o.Report.Status)
	}
}

// Message is the one-line reason the lab did not pass, "" on a pass.
func (o *labOutcome) Message() string {
	switch {
	case o.Refused != nil:
		return o.Refused.Error()
	case o.NotGradable != "":
		return "not gradable: " + o.NotGradable
	default:
		return o.Report.Message
	}
}

// gradeOne builds the lab from the course and the checkout's stub file,
// grades it and verifies a pass.
func (g *grader) gradeOne(ctx context.Context, lab *lessons.Lab, rep reporter) *labOutcome {
	out := &labOutcome{Lab: lab}
	o, cleanup, err := g.prepare(ctx, lab)
	if err != nil {
		if !errors.As(err, &out.Refused) {
			out.NotGradable = err.Error()
		}
		return out
	}
	defer cleanup()
	r, err := grade.Grade(ctx, o, grade.StepSpecs(*lab))
	out.Report = r
	if why := grade.NotGradable(r, err); why != "" {
		out.NotGradable = why
		return out
	}
	if r.Status == grade.LabUnverified {
		// The steps are listed once the runs under the race detector
		// have settled them: a step that passed the first run only is
		// not shown as passed.
		stop := rep.verifying(o)
		grade.Verify(ctx, o, r)
		stop()
		if why := grade.NotGradable(r, r.Err); why != "" {
			out.NotGradable = why
		}
	}
	rep.steps(r)
	return out
}

// prepare reads the lab's stub from the checkout and returns the options
// that grade it with the course, with an etcd for the etcd labs.
func (g *grader) prepare(ctx context.Context, lab *lessons.Lab) (grade.Options, func(), error) {
	sub, err := g.labFiles(lab)
	if err != nil {
		return grade.Options{}, nil, err
	}
	o, cleanup, err := g.kit.Prepare(sub, grade.Options{Env: labEnv(g.env)})
	if err != nil {
		return grade.Options{}, nil, err
	}
	if !g.env.Etcd.Remote() && grade.UsesEtcd(filepath.Join(o.Dir, "labs", lab.ID)) {
		eps, err := g.etcdEndpoints(ctx)
		if err != nil {
			cleanup()
			return grade.Options{}, nil, fmt.Errorf("etcd for the etcd labs did not start: %w", err)
		}
		o.Env = append(o.Env, grade.EtcdEnv(eps))
	}
	return o, cleanup, nil
}

// labFiles is the learner's part of lab: the --submission file, else
// the checkout's stub files.
func (g *grader) labFiles(lab *lessons.Lab) (grade.Submission, error) {
	if g.submission == "" {
		return g.kit.FromCheckout(g.root, lab.ID, g.cfg.Overlay)
	}
	src, err := class.ReadSource(g.submission)
	if err != nil {
		return grade.Submission{}, fmt.Errorf("read the submission: %w", err)
	}
	return grade.Submission{Lab: lab.ID, Files: map[string][]byte{lab.File: src}}, nil
}

// etcdEndpoints starts one embedded etcd for every etcd lab, as the TUI
// does, so that each test binary need not start its own.
func (g *grader) etcdEndpoints(ctx context.Context) ([]string, error) {
	if g.etcd == nil && g.etcdErr == nil {
		g.etcd, g.etcdErr = embedetcd.Start(ctx)
	}
	if g.etcdErr != nil {
		return nil, g.etcdErr
	}
	return g.etcd.Endpoints(), nil
}

// record saves a verified pass in the learner's progress and publishes it
// to the class, saying on stderr what did not work. A --submission grade
// is no pass of the learner running it and is not recorded.
func (g *grader) record(ctx context.Context, out *labOutcome) {
	if !out.Passed() || g.submission != "" {
		return
	}
	lab := out.Lab
	if g.progErr != nil {
		fmt.Fprintf(g.env.Stderr, "playground grade: %s passed but progress is not saved: %v\n", lab.ID, g.progErr)
		out.Unsaved = true
		return
	}
	p, err := progress.Update(g.prog, func(p *progress.Progress) {
		p.RecordLabPassed(lab.Lesson, lab.ID, g.cfg.Now())
	})
	if err != nil {
		fmt.Fprintf(g.env.Stderr, "playground grade: %s passed but progress is not saved: %v\n", lab.ID, err)
		out.Unsaved = true
	} else if err := publishPass(ctx, g.env, *lab, g.root, p); err != nil {
		fmt.Fprintf(g.env.Stderr, "playground grade: %s passed and is saved, but the class board did not get it: %v\n", lab.ID, err)
		out.Unsaved = true
	}
}

// exitNotSaved is grade's exit status when every lab passed but a pass
// could not be saved in the progress or sent to the class board.
const exitNotSaved = 4

// gradeExit is the command's exit status for the outcomes.
func gradeExit(outs []*labOutcome) error {
	code := 0
	for _, o := range outs {
		switch {
		case o.NotGradable != "":
			code = 3
		case !o.Passed() && (code == 0 || code == exitNotSaved):
			code = 1
		case o.Unsaved && code == 0:
			code = exitNotSaved
		}
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

func writeGradeFiles(a gradeArgs, outs []*labOutcome) error {
	if a.junit != "" {
		if err := writeJUnit(a.junit, outs); err != nil {
			return err
		}
	}
	if a.gradescope != "" {
		if err := writeGradescope(a.gradescope, outs); err != nil {
			return err
		}
	}
	return nil
}

// pickLabs resolves the command line's lab names (see Course.FindLab).
// No names means every lab.
func pickLabs(c *lessons.Course, names []string) ([]*lessons.Lab, error) {
	if len(names) == 0 {
		if len(c.Labs) == 0 {
			return nil, errors.New("grade: the course has no labs")
		}
		return c.Labs, nil
	}
	var out []*lessons.Lab
	for _, n := range names {
		l := c.FindLab(n)
		if l == nil {
			return nil, Usagef("no lab %q (the labs: %s)", n, strings.Join(c.LabChoices(), ", "))
		}
		out = append(out, l)
	}
	return out, nil
}
