package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui"
	"github.com/ownership-election/playground/internal/tui/screen/lab"
	"github.com/ownership-election/playground/lessons"
)

func init() {
	Register(&Command{
		Name:    "",
		Usage:   "",
		Summary: "open the interactive course",
		Run:     runTUI,
	})
}

// runTUI opens the course in the terminal. When stdout is not a terminal it
// prints the course outline instead and exits 0, so piping the program
// somewhere never leaves escape codes behind.
func runTUI(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		return Usagef("unknown command %q (see playground --help)", args[0])
	}
	src, err := courseSources(env, "")
	if err != nil {
		return err
	}
	if !isTerminalWriter(env.Stdout) {
		course, probs := lessons.Load(src)
		printOutline(env.Stdout, course, probs)
		return nil
	}
	// The course map needs the lessons' own files only; the quizzes and
	// labs load in the background after the first frame.
	course := lessons.Outline(src)

	path, prog, notice := loadProgress()

	// Bubble Tea restores the terminal when its own code or a command
	// panics; this covers a panic on this goroutine around it, so no exit
	// path leaves the learner's terminal raw.
	defer restoreTerminalOnPanic(env)()

	etcd := &etcdHolder{}
	root := checkoutRoot()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// On a class cluster, every saved snapshot also goes to the class
	// board (and the loaded one at once, so a restarted playground loses
	// nothing there either).
	board := startClassPublisher(env, prog)
	defer board.Close(3 * time.Second)
	m := tui.New(tui.Options{
		Course:         course,
		Load:           func() (*lessons.Course, []lessons.Problem) { return lessons.Load(src) },
		Progress:       prog,
		ProgressNotice: notice,
		ProgressPath:   path,
		ProgressSaved:  board.Offer,
		ClassStatus:    board.Status(),
		Learner:        env.Learner,
		Context:        ctx,
		Etcd:           etcd.starter(env.Etcd),
		EtcdExternal:   env.Etcd.Remote(),
		EtcdLogPath:    embedetcd.LogPath(),
		Lab:            lab.Options{Root: root, Catalog: labCatalog(), Env: labEnv(env)},
		EtcdShared:     sharedEtcd(env),
		// Compile the labs' tests ahead, so the first grade rarely waits.
		Background: lab.Prewarm(ctx, nil, root, labIDs(course)),
	})
	return runProgram(ctx, cancel, env, m, etcd)
}

// loadProgress reads the learner's saved progress; notice says what went
// wrong (a corrupt file moved aside, no place to save), for the home
// screen. An empty path means progress is not saved.
func loadProgress() (path string, prog *progress.Progress, notice string) {
	path, err := progress.DefaultPath()
	if err != nil {
		return "", progress.New(), "progress will not be saved: " + err.Error()
	}
	progress.Tidy(path) // temp files of a run killed mid-save; best effort
	prog, n := progress.Load(path, time.Now())
	if n != nil {
		notice = n.String()
	}
	return path, prog, notice
}

// checkoutRoot is the checkout of the course the working directory is
// in, "" outside one.
func checkoutRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return grade.FindRoot(wd)
}

// runProgram runs the terminal interface until the learner quits, then
// stops what it started: etcd's start (cancel), a grade still running,
// etcd itself.
func runProgram(ctx context.Context, cancel context.CancelFunc, env *Env, m tui.Model, etcd *etcdHolder) error {
	// 120 frames a second: the first frame goes out on the first tick, 8 ms
	// after start instead of 16, and scrolling follows the keys closely.
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(120), tea.WithFilter(newKeyFlood().filter))
	final, err := p.Run()
	cancel() // stops a start still in flight
	unsaved := flushProgress(env, final)
	// A grading still running (go test and its test binary) must not
	// outlive the program.
	grade.StopAll()
	if cerr := etcd.close(5 * time.Second); cerr != nil {
		fmt.Fprintf(env.Stderr, "playground: stop etcd: %v\n", cerr)
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("run the terminal interface: %w", err)
	}
	if unsaved {
		// Like quiz and review: a session whose progress did not reach
		// the disk does not end as a success.
		return &ExitError{Code: 1}
	}
	return nil
}

// flushProgress writes the progress changes a failed save left waiting,
// now that the screen is gone, and says on stderr when some still could
// not be written; it reports whether any were lost.
func flushProgress(env *Env, final tea.Model) (unsaved bool) {
	m, ok := final.(tui.Model)
	if !ok {
		return false
	}
	n, err := m.FlushProgress()
	if err != nil {
		fmt.Fprintf(env.Stderr, "playground: %d progress changes could not be saved: %v\n", n, err)
		return true
	}
	return false
}

// restoreTerminalOnPanic records the terminal's state and returns a
// function for defer that, when the goroutine is panicking, puts the state
// back (cooked mode, main screen, visible cursor) before the panic goes on.
func restoreTerminalOnPanic(env *Env) func() {
	in, ok := env.Stdin.(*os.File)
	var state *term.State
	if ok && term.IsTerminal(in.Fd()) {
		state, _ = term.GetState(in.Fd())
	}
	return func() {
		r := recover()
		if r == nil {
			return
		}
		if state != nil {
			term.Restore(in.Fd(), state)
		}
		// Leave the alternate screen, show the cursor, end mouse reports.
		fmt.Fprint(env.Stdout, "\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1006l\r\n")
		panic(r)
	}
}

// etcdHolder remembers the etcd the TUI started so that it is stopped when
// the program ends, however the TUI was left.
type etcdHolder struct {
	mu   sync.Mutex
	srv  embedetcd.Etcd
	done chan struct{}
}

// sharedEtcd names the external cluster the connection flags point at,
// or "" for the embedded etcd.
func sharedEtcd(env *Env) string {
	if !env.Etcd.Remote() {
		return ""
	}
	return strings.Join(env.Etcd.Endpoints, ",")
}

func (h *etcdHolder) starter(settings access.Settings) tui.EtcdStarter {
	return func(ctx context.Context) (embedetcd.Etcd, error) {
		h.mu.Lock()
		h.done = make(chan struct{})
		done := h.done
		h.mu.Unlock()
		defer close(done)
		srv, err := embedetcd.Open(ctx, settings, embedetcd.WithTicks(embedetcd.IdleTicks))
		if err != nil {
			return nil, err
		}
		h.mu.Lock()
		h.srv = srv
		h.mu.Unlock()
		return srv, nil
	}
}

// close waits up to wait for a start in flight, then closes what started.
func (h *etcdHolder) close(wait time.Duration) error {
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-time.After(wait):
			return errors.New("etcd was still starting; its data dir is removed on the next start")
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv == nil {
		return nil
	}
	err := h.srv.Close()
	h.srv = nil
	return err
}

// labEnv passes an external cluster (with its TLS files and user) on to
// the etcd labs' graders, which read the PLAYGROUND_ETCD_* variables.
func labEnv(env *Env) []string { return env.Etcd.Env() }

// labIDs lists the course's labs in lesson order, each once.
func labIDs(c *lessons.Course) []string {
	var ids []string
	seen := map[string]bool{}
	for _, l := range c.Lessons {
		for _, id := range l.Labs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// isTerminalWriter reports whether w is a terminal. A character device is
// not enough: /dev/null is one too.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// printOutline is the course for a pipe or a file: lessons with their
// parts, and how to open the interactive course.
func printOutline(w io.Writer, c *lessons.Course, probs []lessons.Problem) {
	fmt.Fprintln(w, "Ownership election playground: leader election, locks, leases and fencing tokens on a real etcd.")
	fmt.Fprintln(w)
	for _, l := range c.Lessons {
		fmt.Fprintf(w, "%02d  %s\n", l.Number, l.Title)
		if l.Summary != "" {
			fmt.Fprintf(w, "    %s\n", l.Summary)
		}
		parts := []string{fmt.Sprintf("%d pages", len(l.Pages))}
		if l.Quiz != nil && len(l.QuizQuestions()) > 0 {
			parts = append(parts, fmt.Sprintf("quiz %s (%d questions)", l.Quiz.ID, len(l.QuizQuestions())))
		}
		if len(l.Labs) > 0 {
			parts = append(parts, "labs "+strings.Join(l.Labs, ", "))
		}
		if len(l.Experiments) > 0 {
			parts = append(parts, "experiments "+strings.Join(l.Experiments, ", "))
		}
		fmt.Fprintf(w, "    %s\n\n", strings.Join(parts, " · "))
	}
	if len(probs) > 0 {
		fmt.Fprintf(w, "The course has %d problem(s); `playground check` lists them.\n\n", len(probs))
	}
	fmt.Fprintln(w, "This is the outline because standard output is not a terminal.")
	fmt.Fprintln(w, "Run `playground` in a terminal for the interactive course, or without one:")
	fmt.Fprintln(w, "  playground quiz --list           the quizzes")
	fmt.Fprintln(w, "  playground quiz ID --plain       take a quiz on stdin/stdout")
	fmt.Fprintln(w, "  playground experiment list       the experiments")
}
