// Package grade runs a lab's grader tests with `go test -json` and turns the
// test2json event stream into per-step results: pass, fail, skip or not run,
// the failure lines, compile errors with file:line, and a clear message when
// a run times out. It also warms the build cache and watches a lab folder
// for saves. It knows nothing about the terminal UI.
package grade

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/proctree"
)

// DefaultTimeout bounds the test binary of one run (go test -timeout).
const DefaultTimeout = 25 * time.Second

// DefaultBuildGrace is how long compiling may take on top of the timeout
// before the whole go command is killed. A cold first compile of a lab that
// embeds etcd can take a minute on a small machine.
const DefaultBuildGrace = 3 * time.Minute

// Options says what to run. Dir and Lab are required.
type Options struct {
	// Dir is the module root (the folder holding go.mod).
	Dir string
	// Lab is the lab id; its package is ./labs/<Lab>. Pkg overrides the
	// package pattern when set (used by tests on fixture modules).
	Lab string
	Pkg string
	// Overlay replaces files for this run only (go test -overlay): each key
	// is a file to replace and each value the file to compile instead, both
	// absolute or relative to Dir; "" hides the file.
	Overlay map[string]string
	// Race turns on the race detector; Count repeats each test (default 1,
	// which also bypasses go test's result cache); Run restricts the tests
	// (go test -run).
	Race  bool
	Count int
	Run   string
	// FailFast stops the run at the first failing test (go test
	// -failfast): for callers that only need to know whether any fails.
	FailFast bool
	// Timeout bounds the test binary (default DefaultTimeout). BuildGrace
	// is added to it for the process-kill backstop (default
	// DefaultBuildGrace).
	Timeout    time.Duration
	BuildGrace time.Duration
	// GoCmd is the go command (default "go"). Env is added to the
	// environment of the go command.
	GoCmd string
	Env   []string
	// BinDir is where the linked test binary is kept between runs (go test
	// -o), so that grading again without a change skips the link, which is
	// most of the time of grading an etcd lab. Default: DefaultBinDir.
	// "off" links into a temporary folder each time, as go test does.
	BinDir string
	// Seal makes the harness's signed report the verdict (seal.go): the
	// lab's tests must run under labs/internal/labtest. Course.Prepare
	// sets it.
	Seal bool
	// MemoryLimit bounds the resident memory of the test binary and all
	// it starts, together, when the program contains its gradings
	// (Supervise); default
	// DefaultMemoryLimit.
	MemoryLimit int64
}

// EtcdEnv is the environment entry that hands the etcd labs' tests an etcd
// the grader runs (labs/internal/etcdharness.GraderEtcdEnv), so that they
// need not start one of their own.
func EtcdEnv(endpoints []string) string {
	return "PLAYGROUND_GRADER_ETCD=" + strings.Join(endpoints, ",")
}

// CacheDirEnv overrides where the playground keeps cached files (tests
// point it at a temporary folder).
const CacheDirEnv = "PLAYGROUND_CACHE_DIR"

// DefaultBinDir is $PLAYGROUND_CACHE_DIR/labtests, else
// <user cache dir>/playground/labtests, or "" (keep no binaries) when
// there is no user cache dir.
func DefaultBinDir() string {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		return filepath.Join(dir, "labtests")
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "playground", "labtests")
}

// binMaxAge is how long a kept test binary nobody used stays in the
// default folder (go touches a binary whenever it reuses it).
const binMaxAge = 14 * 24 * time.Hour

var pruneOnce sync.Once

// pruneBinaries removes *.test files in dir not used for maxAge: each
// checkout (and each test's temporary copy of a fixture) gets its own.
func pruneBinaries(dir string, maxAge time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.Contains(e.Name(), ".test") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > maxAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// binPath is the file the test binary of o is kept in, or "" for none. One
// file per module, package and race setting: the go command relinks it
// when anything it was built from changed (an edit, another overlay) and
// leaves it alone otherwise.
func (o Options) binPath() string {
	dir := o.BinDir
	if dir == "off" {
		return ""
	}
	if dir == "" {
		dir = DefaultBinDir()
		if dir == "" {
			return ""
		}
		pruneOnce.Do(func() { pruneBinaries(dir, binMaxAge) })
	}
	root, err := filepath.Abs(o.Dir)
	if err != nil {
		return ""
	}
	key := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%v", root, o.pkg(), o.Race)))
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == '.' || r == ' ' {
			return '_'
		}
		return r
	}, strings.TrimPrefix(o.name(), "./"))
	file := fmt.Sprintf("%s-%x.test", name, key[:6])
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	return filepath.Join(dir, file)
}

// SolutionOverlay returns the overlay that grades the reference solution
// of a lab: labs/<lab>/<file> replaced by solutions/<lab>/<file>.
func SolutionOverlay(lab, file string) map[string]string {
	return map[string]string{
		filepath.Join("labs", lab, file): filepath.Join("solutions", lab, file),
	}
}

func (o Options) pkg() string {
	if o.Pkg != "" {
		return o.Pkg
	}
	return "./" + filepath.ToSlash(filepath.Join("labs", o.Lab))
}

func (o Options) name() string {
	if o.Lab != "" {
		return o.Lab
	}
	return o.Pkg
}

// linkFlags leave the symbol table and DWARF out of the test binary: a
// third less to write, so an etcd lab links in 1.8 s instead of 2.5 s here.
// Panics and failures still print file:line (that comes from pclntab).
const linkFlags = "-s -w"

// args builds the go test command line; extra goes before the package.
func (o Options) args(overlayFile string, extra ...string) []string {
	args := []string{"test", "-ldflags=" + linkFlags}
	if o.Race {
		args = append(args, "-race")
	}
	if bin := o.binPath(); bin != "" {
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err == nil {
			args = append(args, "-o", bin)
		}
	}
	if overlayFile != "" {
		args = append(args, "-overlay", overlayFile)
	}
	args = append(args, extra...)
	return append(args, o.pkg())
}

// runSlack is how long after its own -timeout the grader lets a test
// binary run before killing it: the testing package's alarm should have
// ended it by then (with a report of what hung); when it has not, the
// hang is where that alarm does not reach (init, the harness).
const runSlack = 3 * time.Second

// quitGrace is how long a test binary asked for its stacks (SIGQUIT) has
// to print them and exit before it is killed.
const quitGrace = 5 * time.Second

// binaryTimeout is the test binary's own -timeout: the timeout itself
// where the grader cannot keep the run clock (runclock.go), hangFactor
// times it where the run clock is the alarm.
func (o Options) binaryTimeout() time.Duration {
	if schedClock() {
		return hangFactor * o.Timeout
	}
	return o.Timeout
}

// backstop bounds the whole go command: the build's grace on top of the
// longest the test binary may run.
func (o Options) backstop() time.Duration { return o.binaryTimeout() + o.grace() }

// Run grades once: it runs go test -json and parses what it prints. A
// failing test, a compile error or a timeout is a Result, not an error; the
// error is for a run that could not happen at all (no go command, bad
// options) or was cancelled through ctx. Cancelling ctx kills go test and
// the test binary (their whole process group) before Run returns.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Dir == "" || (o.Lab == "" && o.Pkg == "") {
		return nil, fmt.Errorf("grade: Dir and Lab are required")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	count := o.Count
	if count <= 0 {
		count = 1
	}
	overlay, cleanup, err := WriteOverlay(o.Dir, o.Overlay)
	if err != nil {
		return nil, fmt.Errorf("grade lab %s: %w", o.name(), err)
	}
	defer cleanup()
	extra := []string{"-json", "-count", strconv.Itoa(count), "-timeout", o.binaryTimeout().String()}
	if o.Run != "" {
		extra = append(extra, "-run", o.Run)
	}
	if o.FailFast {
		extra = append(extra, "-failfast")
	}
	res := newResult()
	if o.Seal {
		key, env, err := newSealKey()
		if err != nil {
			return nil, fmt.Errorf("grade lab %s: %w", o.name(), err)
		}
		judge, err := judgeArgs(o.GoCmd)
		if err != nil {
			return nil, fmt.Errorf("grade lab %s: %w", o.name(), err)
		}
		res.sealKey, o.Env = key, append(slices.Clip(o.Env), env)
		extra = append(extra, judge...)
	}
	start := time.Now()
	out, runErr := o.goCommand(ctx, o.args(overlay, extra...), res)
	res.Elapsed = time.Since(start)
	res.CPU = out.cpu
	res.Stderr = splitLines(out.stderr)
	if ctx.Err() != nil {
		res.settle()
		return res, fmt.Errorf("grade lab %s: %w", o.name(), ctx.Err())
	}
	if out.backstop {
		res.settle()
		res.TimedOut = true
		res.Passed = false
		res.Message = fmt.Sprintf("timed out: go test did not finish within %v and was stopped", o.backstop())
		return res, nil
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		res.settle()
		return res, fmt.Errorf("grade lab %s: run go test: %w", o.name(), runErr)
	}
	end := runEnd{timeout: o.Timeout, killed: out.killedRun, onClock: out.onClock, source: o.testSource(), paths: o.overlaidNames()}
	if runErr != nil {
		res.Passed = false
		if exitErr.ProcessState != nil && !exitErr.Exited() {
			end.exit = exitErr.ProcessState.String()
		}
	}
	res.finish(end)
	res.applySeal()
	if overLimit(out.stderr) {
		res.Passed = false
		res.Message = memoryMessage(o.memoryLimit())
	}
	return res, nil
}

// overlaidNames puts back, in what the go command printed, the name of
// each file that an overlay replaced (as the learner knows it, relative
// to Dir) for the file that replaced it; nil without an overlay.
func (o Options) overlaidNames() *strings.Replacer {
	var pairs []string
	for from, to := range o.Overlay {
		if to == "" {
			continue
		}
		abs, err := absPath(o.Dir, to)
		if err != nil {
			continue
		}
		pairs = append(pairs, abs, filepath.ToSlash(from))
		// The go command names a file relative to its folder (Dir)
		// when that is shorter: a submission's temporary folder near
		// the course's build folder (TMPDIR under HOME). Without this
		// pair that compile error would be no lab file's, and the
		// learner's mistake "not gradable".
		if dir, err := absPath(o.Dir, "."); err == nil {
			if rel, err := filepath.Rel(dir, abs); err == nil && strings.HasPrefix(rel, "..") {
				pairs = append(pairs, rel, filepath.ToSlash(from))
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	return strings.NewReplacer(pairs...)
}

// absPath is an overlay's path made absolute, a relative one taken from
// dir (Options.Dir).
func absPath(dir, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Abs(p)
}

func (o Options) memoryLimit() int64 {
	if o.MemoryLimit > 0 {
		return o.MemoryLimit
	}
	return DefaultMemoryLimit
}

// Warm compiles the lab's test binary without running any test, so that the
// first real grading is fast. Call it with the options the grading will use
// (Race, Overlay), because each combination is cached separately.
func Warm(ctx context.Context, o Options) error {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	overlay, cleanup, err := WriteOverlay(o.Dir, o.Overlay)
	if err != nil {
		return fmt.Errorf("warm lab %s: %w", o.name(), err)
	}
	defer cleanup()
	res := newResult()
	out, err := o.goCommand(ctx, o.args(overlay, "-json", "-count", "1", "-run", "^$"), res)
	if err != nil {
		res.settle()
		msg := strings.TrimSpace(strings.Join(append(append(res.BuildOutput, res.Output...), out.stderr), "\n"))
		return fmt.Errorf("warm lab %s: %w: %s", o.name(), err, msg)
	}
	return nil
}

func (o Options) grace() time.Duration {
	if o.BuildGrace > 0 {
		return o.BuildGrace
	}
	return DefaultBuildGrace
}

type output struct {
	stderr    string
	backstop  bool          // the build-and-run backstop fired
	killedRun bool          // the test binary ran past its timeout and was killed
	onClock   time.Duration // when killedRun: the wall time it had run
	cpu       time.Duration // user+system time of go and the processes it waited for
}

// goCommand runs the go command in its own process group, feeding what it
// prints on standard output to res (when not nil) line by line as it
// comes. It kills the whole group (go and the test binary it started) when
// ctx is cancelled, when the backstop deadline passes, or, once go test
// reports the test binary started, when the binary outlives its -timeout
// by runSlack, or its run clock passes the timeout (runclock.go).
func (o Options) goCommand(ctx context.Context, args []string, res *Result) (output, error) {
	goCmd := o.GoCmd
	if goCmd == "" {
		goCmd = "go"
	}
	backstopCtx, cancelBackstop := context.WithTimeout(ctx, o.backstop())
	defer cancelBackstop()
	runCtx, killRun := context.WithCancel(backstopCtx)
	defer killRun()
	cmd := exec.CommandContext(runCtx, goCmd, args...)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), o.Env...)
	var stderr byteBuf
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return output{}, err
	}
	started, done := func() {}, func() {}
	if supervising.Load() {
		if started, done, err = supervisedCommand(cmd, goCmd, o.memoryLimit()); err != nil {
			return output{}, err
		}
	} else {
		// Cancelling kills the test binary the go command started too,
		// not only go itself.
		proctree.Group(cmd)
		proctree.KillGroupOnCancel(cmd)
	}
	defer done()
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return output{}, err
	}
	started()
	track(cmd)
	defer untrack(cmd)
	var watch *runWatch
	readLines(stdout, func(line []byte) {
		if res == nil {
			return
		}
		started := res.Started
		res.feed(line)
		if !started && res.Started && watch == nil {
			watch = watchRun(cmd.Process.Pid, o.Timeout, killRun)
		}
	})
	err = cmd.Wait()
	watch.stop()
	out := output{stderr: stderr.String()}
	if ps := cmd.ProcessState; ps != nil {
		out.cpu = ps.UserTime() + ps.SystemTime()
	}
	out.backstop = ctx.Err() == nil && errors.Is(backstopCtx.Err(), context.DeadlineExceeded)
	if !out.backstop && ctx.Err() == nil && watch.rang() {
		out.killedRun, out.onClock = true, watch.onClock
	}
	return out, err
}

// WriteOverlay writes overlay (each file, relative to dir or absolute,
// replaced by the file it maps to, or deleted for "") as the JSON file
// that go build and go test take with -overlay, with absolute paths, in
// the temporary folder. It returns the file's path and a cleanup that
// removes it; "" and a no-op when overlay is empty. A replacement that
// does not exist is an error here rather than a compiler's puzzle later.
func WriteOverlay(dir string, overlay map[string]string) (string, func(), error) {
	if len(overlay) == 0 {
		return "", func() {}, nil
	}
	replace := map[string]string{}
	for from, to := range overlay {
		f, err := absPath(dir, from)
		if err != nil {
			return "", nil, fmt.Errorf("overlay %s: %w", from, err)
		}
		if to == "" {
			replace[f] = "" // go treats the file as deleted
			continue
		}
		t, err := absPath(dir, to)
		if err != nil {
			return "", nil, fmt.Errorf("overlay %s: %w", to, err)
		}
		if _, err := os.Stat(t); err != nil {
			return "", nil, fmt.Errorf("overlay: %w", err)
		}
		replace[f] = t
	}
	data, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", nil, fmt.Errorf("encode overlay: %w", err)
	}
	f, err := os.CreateTemp("", "playground-overlay-*.json")
	if err != nil {
		return "", nil, fmt.Errorf("write overlay: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", nil, fmt.Errorf("write overlay: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", nil, fmt.Errorf("write overlay: %w", err)
	}
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}

// running holds the go commands of gradings in progress, so that StopAll
// can end them when the program ends.
var running struct {
	sync.Mutex
	cmds map[*exec.Cmd]bool
}

func track(cmd *exec.Cmd) {
	running.Lock()
	defer running.Unlock()
	if running.cmds == nil {
		running.cmds = map[*exec.Cmd]bool{}
	}
	running.cmds[cmd] = true
}

func untrack(cmd *exec.Cmd) {
	running.Lock()
	defer running.Unlock()
	delete(running.cmds, cmd)
}

// StopAll kills every grading still running (go test and the test binary
// it started: their whole process group) and returns once they were
// signalled. Call it as the program ends (the TUI quitting): cancelling a
// grading's context alone leaves the kill to a goroutine that may never
// run again once main returns, and the test binary would live on.
func StopAll() {
	running.Lock()
	defer running.Unlock()
	for cmd := range running.cmds {
		if cmd.Cancel != nil {
			cmd.Cancel()
		} else if cmd.Process != nil {
			cmd.Process.Kill()
		}
	}
}
