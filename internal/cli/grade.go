package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/lessons"
)

func init() {
	Register(&Command{
		Name:    "grade",
		Usage:   "grade [--json] [--junit FILE] [LAB...]",
		Summary: "grade labs from the shell the way the lab screen does, and record passes",
		Help: `Grades each named lab (all of them without arguments) in the checkout
around the current folder: the steps' tests run once, and a lab whose
every step passed is then verified, 5 more runs under the race detector.
A lab counts as passed only once verified; a racy or flaky solution is
reported with the failing run's message. Passes are recorded in your
progress, as in the terminal interface.

A LAB is its number in the course (3.1: lesson 3's first lab), its
folder (01_cas), the folder's number (01 or 1) or its name (cas).

  --json        print one JSON object per lab (steps, status, message,
                duration) instead of text
  --junit FILE  also write the results as JUnit XML to FILE

Exit codes: 0 every named lab passed, 1 some did not (or grading could not
run), 2 bad usage, 130/143 stopped by Ctrl-C or SIGTERM.`,
		Run: runGrade,
	})
}

// gradeConfig is what a grading run needs beyond its flags; tests fill in
// Root and Overlay.
type gradeConfig struct {
	Root    string            // the checkout; "" to look around the working folder
	Overlay map[string]string // go test -overlay for every lab (tests grade solutions this way)
	Now     func() time.Time
}

func runGrade(ctx context.Context, env *Env, args []string) error {
	return gradeLabs(ctx, env, args, gradeConfig{})
}

func gradeLabs(ctx context.Context, env *Env, args []string, cfg gradeConfig) error {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "one JSON object per lab")
	junit := fs.String("junit", "", "write JUnit XML to `FILE`")
	// Flags may come before or after the lab names.
	var names []string
	for {
		if err := fs.Parse(args); err != nil {
			return Usagef("%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	course, _, err := loadCourse(env, "")
	if err != nil {
		return err
	}
	labsToGrade, err := pickLabs(course, names)
	if err != nil {
		return err
	}
	root := cfg.Root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("grade: %w", err)
		}
		if root = grade.FindRoot(wd); root == "" {
			return errors.New("grade: not inside a checkout of the course (a folder whose go.mod is " + grade.ModulePath + " with labs/ in it); clone it and run playground grade there")
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if *junit != "" {
		// Fail now rather than after minutes of grading.
		f, err := os.OpenFile(*junit, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return Usagef("--junit: %v", err)
		}
		f.Close()
	}

	// Ctrl-C or SIGTERM: end the grading's go test and test binary at
	// once, even if the command itself is not waited for.
	defer context.AfterFunc(ctx, grade.StopAll)()

	baseEnv := labEnv(env)
	var etcdSrv embedetcd.Etcd
	defer func() {
		if etcdSrv != nil {
			etcdSrv.Close()
		}
	}()
	progPath, progErr := progress.DefaultPath()

	var reports []*grade.Report
	for _, lab := range labsToGrade {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o := grade.Options{Dir: root, Lab: lab.ID, Env: baseEnv, Overlay: cfg.Overlay}
		if !env.Etcd.Remote() && grade.UsesEtcd(filepath.Join(root, "labs", lab.ID)) {
			// One embedded etcd for every etcd lab, as the TUI does, so
			// that each test binary need not start its own.
			if etcdSrv == nil {
				srv, err := embedetcd.Start(ctx)
				if err != nil {
					return fmt.Errorf("grade: start etcd for the etcd labs: %w", err)
				}
				etcdSrv = srv
			}
			o.Env = append(append([]string{}, baseEnv...), grade.EtcdEnv(etcdSrv.Endpoints()))
		}
		steps := make([]grade.StepSpec, len(lab.Steps))
		for i, s := range lab.Steps {
			steps[i] = grade.StepSpec{Test: s.Test, Title: s.Title}
		}
		if !*asJSON {
			// Numbered by lesson as the course shows it, with the folder.
			head := course.LabName(lab.ID) + " (" + lab.ID + ")  " + lab.Title
			if l := course.Lesson(lab.Lesson); l != nil {
				head += fmt.Sprintf("  (lesson %d: %s)", l.Number, l.Title)
			}
			fmt.Fprintln(env.Stdout, head)
		}
		r, err := grade.Grade(ctx, o, steps)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !*asJSON {
			printSteps(env.Stdout, r)
		}
		if err == nil && r.Status == grade.LabUnverified {
			stop := func() {}
			if !*asJSON {
				stop = announceVerify(env.Stdout, o)
			}
			err := grade.Verify(ctx, o, r)
			stop()
			if ctx.Err() != nil {
				return ctx.Err()
			} else if err != nil && r.Status != grade.LabError {
				return err
			}
		}
		if r.Passed() {
			if progErr != nil {
				fmt.Fprintf(env.Stderr, "playground grade: %s passed but progress is not saved: %v\n", lab.ID, progErr)
			} else if p, err := progress.Update(progPath, func(p *progress.Progress) {
				p.RecordLabPassed(lab.Lesson, lab.ID, cfg.Now())
			}); err != nil {
				fmt.Fprintf(env.Stderr, "playground grade: %s passed but progress is not saved: %v\n", lab.ID, err)
			} else if err := publishPass(ctx, env, *lab, root, p); err != nil {
				fmt.Fprintf(env.Stderr, "playground grade: %s passed and is saved, but the class board did not get it: %v\n", lab.ID, err)
			}
		}
		if *asJSON {
			if err := json.NewEncoder(env.Stdout).Encode(jsonReport(lab, r)); err != nil {
				return fmt.Errorf("grade: write JSON: %w", err)
			}
		} else {
			printVerdict(env.Stdout, r)
		}
		reports = append(reports, r)
	}
	passed := 0
	var failed []string
	for _, r := range reports {
		if r.Passed() {
			passed++
		} else {
			failed = append(failed, fmt.Sprintf("%s (%s)", r.Lab, r.Status))
		}
	}
	if !*asJSON {
		fmt.Fprintf(env.Stdout, "%d of %d labs passed", passed, len(reports))
		if len(failed) > 0 {
			fmt.Fprintf(env.Stdout, "; not passed: %s", strings.Join(failed, ", "))
		}
		fmt.Fprintln(env.Stdout)
	}
	if *junit != "" {
		if err := writeJUnit(*junit, labsToGrade, reports); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return &ExitError{Code: 1}
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

// stepMark is how a step's status reads in the text output.
func stepMark(s grade.Status) string {
	switch s {
	case grade.Pass:
		return "ok  "
	case grade.Fail:
		return "FAIL"
	case grade.Skip:
		return "skip"
	default:
		return "--  "
	}
}

func printSteps(w io.Writer, r *grade.Report) {
	if res := r.Result; res != nil && res.BuildFailed {
		fmt.Fprintf(w, "  %s\n", r.Message)
		return
	}
	for i, s := range r.Steps {
		fmt.Fprintf(w, "  %s step %d: %s", stepMark(s.Status), i+1, s.Title)
		if s.Status == grade.Pass {
			fmt.Fprintf(w, " (%.2fs)", s.Elapsed.Seconds())
		}
		if s.Status == grade.NotRun {
			fmt.Fprint(w, " (not run)")
		}
		fmt.Fprintln(w)
		lines := s.Summary // every failing subtest, each with its first line
		if m := s.Message(); m != "" && len(lines) == 0 {
			lines = []string{m}
		}
		for _, l := range lines {
			fmt.Fprintf(w, "         %s\n", l)
		}
	}
}

func printVerdict(w io.Writer, r *grade.Report) {
	switch r.Status {
	case grade.LabPassed:
		fmt.Fprintf(w, "  PASS: every step, verified by %d runs under the race detector (%.1fs + %.1fs)\n\n", grade.VerifyCount, r.Elapsed.Seconds(), r.Verify.Elapsed.Seconds())
	case grade.LabRacy:
		fmt.Fprintf(w, "  RACY: %s\n\n", r.Message)
	case grade.LabFlaky:
		fmt.Fprintf(w, "  FLAKY: %s\n\n", r.Message)
	case grade.LabFailed:
		if res := r.Result; res != nil && res.Message != "" {
			fmt.Fprintf(w, "  FAIL: %s\n\n", res.Message)
		} else {
			fmt.Fprintf(w, "  FAIL: %d of %d steps passed\n\n", r.StepsPassed(), len(r.Steps))
		}
	default:
		fmt.Fprintf(w, "  %s: %s\n\n", strings.ToUpper(string(r.Status)), r.Message)
	}
}

// The --json shape, one object per lab.
type jsonLab struct {
	Lab      string      `json:"lab"`
	Title    string      `json:"title"`
	Status   string      `json:"status"`
	Passed   bool        `json:"passed"`
	Message  string      `json:"message,omitempty"`
	Duration float64     `json:"duration"`
	Steps    []jsonStep  `json:"steps"`
	Verify   *jsonVerify `json:"verification,omitempty"`
}

type jsonStep struct {
	Number   int      `json:"number"`
	Test     string   `json:"test"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Message  string   `json:"message,omitempty"`
	Output   []string `json:"output,omitempty"`
	Duration float64  `json:"duration"`
}

type jsonVerify struct {
	Runs     int     `json:"runs"`
	Failed   int     `json:"failed"`
	Race     bool    `json:"race"`
	Message  string  `json:"message,omitempty"`
	Duration float64 `json:"duration"`
}

func jsonReport(lab *lessons.Lab, r *grade.Report) jsonLab {
	j := jsonLab{Lab: lab.ID, Title: lab.Title, Status: string(r.Status), Passed: r.Passed(), Message: r.Message, Duration: r.Elapsed.Seconds(), Steps: []jsonStep{}}
	for i, s := range r.Steps {
		js := jsonStep{Number: i + 1, Test: s.Test, Title: s.Title, Status: string(s.Status), Message: s.Message(), Duration: s.Elapsed.Seconds()}
		if s.Status == grade.Fail {
			js.Output = s.Failure
		}
		j.Steps = append(j.Steps, js)
	}
	if v := r.Verify; v != nil {
		j.Verify = &jsonVerify{Runs: v.Runs, Failed: v.Failed, Race: v.Race, Message: v.Message, Duration: v.Elapsed.Seconds()}
		j.Duration += v.Elapsed.Seconds()
	}
	return j
}

// JUnit XML, as classroom autograders read it: a suite per lab, a case
// per step, and a case for the verification once it ran.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func writeJUnit(path string, labs []*lessons.Lab, reports []*grade.Report) error {
	var doc junitSuites
	for i, r := range reports {
		lab := labs[i]
		s := junitSuite{Name: lab.ID, Time: secs(r.Elapsed)}
		for n, st := range r.Steps {
			c := junitCase{Class: lab.ID, Name: fmt.Sprintf("step %d: %s (%s)", n+1, st.Title, st.Test), Time: secs(st.Elapsed)}
			switch st.Status {
			case grade.Pass:
			case grade.Skip:
				c.Skipped = &junitSkipped{Message: "skipped"}
				s.Skipped++
			default:
				msg := st.Message()
				if msg == "" {
					msg = r.Message
				}
				c.Failure = &junitFailure{Message: msg, Type: string(st.Status), Text: strings.Join(st.Failure, "\n")}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		if r.Status != grade.LabFailed && r.Status != grade.LabError {
			c := junitCase{Class: lab.ID, Name: fmt.Sprintf("verification: %d runs under -race", grade.VerifyCount)}
			if v := r.Verify; v != nil {
				c.Time = secs(v.Elapsed)
			}
			if !r.Passed() {
				c.Failure = &junitFailure{Message: r.Message, Type: string(r.Status)}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		} else if r.Status == grade.LabError || (len(r.Steps) > 0 && s.Failures == 0) {
			// The run failed outside the steps: say so in a case of its own.
			s.Cases = append(s.Cases, junitCase{Class: lab.ID, Name: "run", Failure: &junitFailure{Message: r.Message, Type: string(r.Status)}})
			s.Failures++
		}
		s.Tests = len(s.Cases)
		doc.Suites = append(doc.Suites, s)
	}
	data, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("grade: encode JUnit XML: %w", err)
	}
	data = append([]byte(xml.Header), append(data, '\n')...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("grade: write JUnit XML: %w", err)
	}
	return nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
