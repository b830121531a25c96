package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/sanitize"
	"github.com/ownership-election/playground/lessons"
)

// publishPass sends a pass to the class board: the learner's summary, and
// the graded file as a submission for `class verify` to regrade. Outside
// a class it does nothing.
func publishPass(ctx context.Context, env *Env, lab lessons.Lab, root string, p *progress.Progress) error {
	if err := publishToClass(ctx, env, p); err != nil {
		return err
	}
	s := env.Etcd
	if env.NoPublish || !s.Remote() || s.User == "" || s.User == "root" {
		return nil
	}
	src, err := class.ReadSource(filepath.Join(root, "labs", lab.ID, lab.File))
	if err != nil {
		return fmt.Errorf("read the graded file: %w", err)
	}
	sub, err := class.NewSubmission(lab.ID, lab.File, src, time.Now())
	if err != nil {
		return err
	}
	r, err := embedetcd.Connect(ctx, s, embedetcd.LearnerPrefix(s))
	if err != nil {
		return err
	}
	defer r.Close()
	cli, err := r.Client()
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return sub.Publish(pctx, cli.KV)
}

// verifyLimits bound one regrade: the learner's code runs in it.
type verifyLimits struct {
	wall time.Duration // the whole grade, verification included
	cpu  uint64        // seconds of CPU for the grade's own process tree root
}

// classVerify regrades every submission not judged yet with the
// instructor's own course and records a verdict for each.
func classVerify(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("class verify", flag.ContinueOnError)
	wall := fs.Duration("timeout", 10*time.Minute, "wall-clock limit of one regrade")
	names, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	course, _, err := loadCourse(env, "")
	if err != nil {
		return err
	}
	root, err := rootClient(ctx, env.Etcd)
	if err != nil {
		return err
	}
	defer root.Close()
	if len(names) == 0 {
		if names, err = class.Roster(ctx, root); err != nil {
			return env.Etcd.Explain(err)
		}
	}
	verdicts, _, err := class.Verdicts(ctx, root)
	if err != nil {
		return env.Etcd.Explain(err)
	}
	if note := grade.SandboxNote(); note != "" {
		fmt.Fprintf(env.Stderr, "class verify: no full sandbox: %s.\n", note)
	}
	v := verifier{env: env, gocache: verifyCache(), course: course, goEnv: goCaches(), limits: verifyLimits{wall: *wall, cpu: 30 * 60}}
	for _, name := range names {
		if err := v.learner(ctx, root, name, verdicts[name]); err != nil {
			return err
		}
	}
	return nil
}

type verifier struct {
	env     *Env
	gocache string // the regrades' own build cache (verifyCache)
	course  *lessons.Course
	goEnv   []string // the Go caches, for every regrade (goCaches)
	limits  verifyLimits
}

// learner judges one learner's submissions that have no verdict yet.
func (v verifier) learner(ctx context.Context, root *clientv3.Client, name string, done map[string]class.Verdict) error {
	subs, bad, err := class.Submissions(ctx, root, name)
	if err != nil {
		return v.env.Etcd.Explain(err)
	}
	for _, b := range bad {
		fmt.Fprintf(v.env.Stdout, "%-16s unreadable submission: %v\n", name, b)
	}
	for _, lab := range slices.Sorted(maps.Keys(subs)) {
		sub := subs[lab]
		if d, ok := done[lab]; ok && d.Rev == sub.Rev {
			continue
		}
		verdict := v.judge(ctx, sub)
		if err := class.WriteVerdict(ctx, root, name, lab, verdict); err != nil {
			return v.env.Etcd.Explain(err)
		}
		what := "verified"
		if !verdict.Verified {
			what = "refused: " + verdict.Reason
		}
		fmt.Fprintf(v.env.Stdout, "%-16s %-16s %s\n", name, lab, what)
	}
	return nil
}

// judge regrades one submission and says what it found.
func (v verifier) judge(ctx context.Context, sub class.Submission) class.Verdict {
	out := class.Verdict{Rev: sub.Rev, SHA256: sub.SHA256, At: time.Now()}
	lab := v.course.Lab(sub.Lab)
	switch {
	case lab == nil:
		out.Reason = fmt.Sprintf("%s is not a lab of this course", sub.Lab)
	case sub.File != lab.File:
		out.Reason = fmt.Sprintf("the file is %s; the lab's file is %s", sub.File, lab.File)
	default:
		out.Verified, out.Reason = v.regrade(ctx, *lab, sub)
	}
	return out
}

// regrade grades sub's source with the course built into this program
// (grade.Builtin), in the playground's own `grade --json --submission`
// run as a child process: only the submitted file is the learner's, and
// nothing of a checkout is read. The child has its own process group
// (ended whole when it is over or out of time), a temporary home, state
// and cache folder, no class settings, and CPU and wall-clock limits.
func (v verifier) regrade(ctx context.Context, lab lessons.Lab, sub class.Submission) (bool, string) {
	dir, err := os.MkdirTemp("", "playground-verify-")
	if err != nil {
		return false, "not gradable: " + err.Error()
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, lab.File)
	if err := os.WriteFile(file, []byte(sub.Source), 0o600); err != nil {
		return false, "not gradable: " + err.Error()
	}
	report, err := v.runGrade(ctx, dir, file, lab.ID)
	if err != nil {
		return false, "not gradable: " + err.Error()
	}
	if report.Passed {
		return true, ""
	}
	reason := report.Status
	if report.Message != "" {
		line, _, _ := strings.Cut(report.Message, "\n")
		reason += ": " + line
	}
	return false, reason
}

// gradeReport is the part of `grade --json`'s line that a verdict needs.
type gradeReport struct {
	Lab     string `json:"lab"`
	Status  string `json:"status"`
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
}

func (v verifier) runGrade(ctx context.Context, dir, file, lab string) (gradeReport, error) {
	self, err := playgroundBinary()
	if err != nil {
		return gradeReport{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, v.limits.wall)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "grade", "--json", "--submission", file, lab)
	cmd.Dir = dir
	cmd.Env = v.childEnv(dir)
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var out strings.Builder
	cmd.Stdout = &limitedWriter{w: &out, n: 4 << 20}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return gradeReport{}, fmt.Errorf("start the regrade: %w", err)
	}
	limitCPU(cmd.Process.Pid, v.limits.cpu)
	werr := cmd.Wait()
	killGroup(cmd) // whatever the grade left behind
	if ctx.Err() != nil {
		return gradeReport{}, fmt.Errorf("the regrade took more than %s", v.limits.wall)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var r gradeReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Lab != lab {
		return gradeReport{}, fmt.Errorf("the regrade gave no report (%v)", errors.Join(werr, err))
	}
	// The report quotes the learner's test output; the verdict's reason
	// goes to the board and to this terminal.
	sanitize.Strings(&r)
	return r, nil
}

// childEnv is the regrade's environment, built from nothing: the
// instructor's shell may hold credentials (the class cluster's root
// password, cloud keys) and the regrade runs a learner's code. It keeps
// only PATH, the locale and the Go settings the go command needs, gives
// the regrade a home, state and cache folder of its own, and a build
// cache of its own per course (verifyCache): the learner's build never
// writes into the instructor's. The module cache is shared read-only
// (the course's go.sum pins every module; -mod=readonly).
func (v verifier) childEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if keepForRegrade(name) {
			env = append(env, kv)
		}
	}
	env = append(env, v.goEnv...)
	return append(env, "HOME="+filepath.Join(dir, "home"), "PLAYGROUND_STATE_DIR="+filepath.Join(dir, "state"),
		grade.CacheDirEnv+"="+filepath.Join(dir, "cache"), "GOCACHE="+v.gocache, "TMPDIR="+dir, regradeEnv+"=1")
}

// keepForRegrade reports whether an environment entry of the instructor's
// reaches a regrade.
func keepForRegrade(name string) bool {
	switch name {
	case "PATH", "LANG", "TZ", "GOROOT", "GOTOOLCHAIN", "GOPROXY", "GONOSUMDB", "GOFLAGS", "GOMAXPROCS":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// goCacheVars are the go env settings a regrade keeps although its HOME
// moves: they default to folders under HOME. GOCACHE is not one of them:
// the regrade has its own.
var goCacheVars = []string{"GOMODCACHE", "GOPATH"}

// verifyCache is the build cache of class verify's regrades: one per
// course (its content hash), kept between runs so that only the first
// regrade builds etcd, under the user's cache folder, never the go
// command's own.
func verifyCache() string {
	dir := os.Getenv(grade.CacheDirEnv)
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		dir = filepath.Join(base, "playground")
	}
	return filepath.Join(dir, "verify-gocache", grade.Builtin().Hash())
}

// goCaches asks the go command once for goCacheVars, as NAME=value
// entries; none when it cannot say (the regrade then finds its own).
func goCaches() []string {
	out, err := exec.Command("go", append([]string{"env"}, goCacheVars...)...).Output()
	if err != nil {
		return nil
	}
	values := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(values) != len(goCacheVars) {
		return nil
	}
	env := make([]string, len(values))
	for i, name := range goCacheVars {
		env[i] = name + "=" + values[i]
	}
	return env
}

// playgroundBinary is the program to regrade with: this one, unless
// PLAYGROUND_SELF names another (tests, whose binary is the test binary).
func playgroundBinary() (string, error) {
	if p := os.Getenv("PLAYGROUND_SELF"); p != "" {
		return p, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the playground program: %w", err)
	}
	return p, nil
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	k := min(len(p), l.n)
	l.n -= k
	if _, err := l.w.Write(p[:k]); err != nil {
		return 0, err
	}
	return len(p), nil
}
