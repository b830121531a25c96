package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/tui"
	"github.com/ownership-election/playground/internal/tui/expview"
	"github.com/ownership-election/playground/internal/tui/theme"
	"github.com/ownership-election/playground/lessons"
	"github.com/ownership-election/playground/quiz"
)

func init() {
	Register(&Command{
		Name:    "experiment",
		Usage:   "experiment list | run NAME",
		Summary: "list the experiments, or run one headless on real etcd",
		Help: `Subcommands:
  list               the experiments, one a line
  run NAME [flags]   run one and print its events and verdict

Flags of run:
  --json             one JSON event a line, then the verdict as JSON
  --seed N           seed for the run's random choices (default 1)
  --replicas N       number of replicas (0: the experiment's default)
  --ttl SECONDS      lease TTL (0: the experiment's default)
  -v                 also print every lease renewal

Exit codes: 0 the experiment showed what it exists to show, 1 it did not
(or failed), 2 bad usage, 3 it needs the in-process etcd and
--etcd-endpoints points elsewhere, 130/143 stopped by Ctrl-C or SIGTERM.`,
		Run: runExperiment,
	})
}

// Exit codes of `experiment run`: 0 the experiment showed what it exists to
// show, 1 it did not (or failed), 2 bad usage, 3 it needs the in-process
// etcd and --etcd-endpoints points elsewhere.
const exitNeedsInProcess = 3

func runExperiment(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("usage: experiment list | experiment run NAME [--json] [--seed N] [--replicas N] [--ttl SECONDS] [-v]")
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			return Usagef("list takes no arguments")
		}
		for _, s := range experiment.Scenarios() {
			where := ""
			if s.SharedCluster(env.Etcd) != nil {
				where = " [in-process etcd only]"
			}
			fmt.Fprintf(env.Stdout, "%-30s %s%s\n", s.Name, s.Title, where)
		}
		return nil
	case "run":
		return runOneExperiment(ctx, env, args[1:])
	default:
		return Usagef("unknown subcommand %q (list or run)", args[0])
	}
}

func runOneExperiment(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("experiment run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON event a line, then the verdict as JSON")
	seed := fs.Uint64("seed", 1, "seed for the run's random choices")
	replicas := fs.Int("replicas", 0, "number of replicas (0: the experiment's default)")
	ttl := fs.Int64("ttl", 0, "lease TTL in seconds (0: the experiment's default)")
	verbose := fs.Bool("v", false, "also print every lease renewal (text mode)")
	// Accept the name before or after the flags.
	var name string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return Usagef("%v", err)
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return Usagef("%v", err)
		}
	}
	if name == "" {
		return Usagef("run needs an experiment NAME (see: playground experiment list)")
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	sc := experiment.Lookup(name)
	if sc == nil {
		return Usagef("no experiment named %q (see: playground experiment list)", name)
	}
	if lo, hi := sc.ReplicaRange(); *replicas != 0 && (*replicas < lo || *replicas > hi) {
		if lo == hi {
			return Usagef("--replicas %d: %s runs exactly %d replica(s)", *replicas, name, lo)
		}
		return Usagef("--replicas %d: %s runs %d to %d replicas", *replicas, name, lo, hi)
	}
	if lo, hi := sc.TTLRange(); *ttl != 0 && (*ttl < lo || *ttl > hi) {
		return Usagef("--ttl %d: %s takes a lease TTL of %d to %d seconds", *ttl, name, lo, hi)
	}
	xenv := experiment.Env{}
	if env.Etcd.Remote() {
		if sc.SharedCluster(env.Etcd) != nil {
			fmt.Fprintf(env.Stderr, "%s: %s\nRun it without --etcd-endpoints: it starts its own in-process etcd.\n", name, needsWhy(sc))
			return &ExitError{Code: exitNeedsInProcess}
		}
		r, err := embedetcd.Connect(ctx, env.Etcd, embedetcd.LearnerPrefix(env.Etcd))
		if err != nil {
			return err
		}
		defer r.Close()
		xenv.Etcd = r
	}
	p := experiment.Params{Replicas: *replicas, TTL: *ttl, Seed: *seed}
	out := env.Stdout
	sink := func(e experiment.Event) {
		switch {
		case e.Kind == experiment.Finished:
			// printed below with the whole verdict
		case *asJSON:
			b, _ := json.Marshal(e)
			fmt.Fprintln(out, string(b))
		case e.Kind == experiment.LeaseRenewed && !*verbose:
		default:
			fmt.Fprintln(out, e.String())
		}
	}
	start := time.Now()
	v, err := experiment.Execute(ctx, name, p, xenv, sink)
	if errors.Is(err, experiment.ErrNeedsCluster) || errors.Is(err, experiment.ErrNeedsInProcess) {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return &ExitError{Code: exitNeedsInProcess}
	}
	if ctx.Err() != nil {
		// Stopped by Ctrl-C or SIGTERM: whatever the script concluded
		// from a run cut short is not a verdict.
		if *asJSON {
			b, _ := json.Marshal(struct {
				Kind     string  `json:"kind"`
				Scenario string  `json:"scenario"`
				Seconds  float64 `json:"seconds"`
			}{"interrupted", name, time.Since(start).Seconds()})
			fmt.Fprintln(out, string(b))
		} else {
			fmt.Fprintf(out, "interrupted after %.1f s: no verdict\n", time.Since(start).Seconds())
		}
		return ctx.Err()
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			Kind string `json:"kind"`
			experiment.Verdict
			Seconds float64 `json:"seconds"`
			Error   string  `json:"error,omitempty"`
		}{"verdict", v, time.Since(start).Seconds(), errString(err)})
		fmt.Fprintln(out, string(b))
	} else {
		mark := "SHOWN"
		if !v.Showed {
			mark = "NOT SHOWN"
		}
		fmt.Fprintf(out, "verdict: %s: %s (%.1f s)\n", mark, v.Summary, time.Since(start).Seconds())
	}
	if err != nil {
		return fmt.Errorf("experiment %s: %w", name, err)
	}
	if !v.Showed {
		return &ExitError{Code: 1}
	}
	return nil
}

func needsWhy(sc *experiment.Scenario) string {
	if sc.NeedsCluster {
		return "this experiment stops etcd members or moves the raft leader, which only the playground's in-process 3-member cluster allows"
	}
	return "this experiment turns on etcd authentication, which the playground only does to its own in-process etcd"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// experimentScreens builds the TUI's experiment screens: the root calls it
// with the experiment's name and the etcd it started (nil until ready, in
// which case a run starts its own). The predict question about the
// experiment, if the course has one, is asked before the run. holder says
// whether the etcd start failed, and shared names the external cluster
// given with the connection flags (empty: none): an experiment never moves
// from a shared cluster that failed to an in-process etcd without asking,
// and the screen always says which etcd the run uses.
func experimentScreens(course *lessons.Course, learner string, holder *etcdHolder, shared string) tui.ExperimentFactory {
	return func(name string, etcd tui.Etcd, st theme.Styles) (tui.Screen, tea.Cmd) {
		s := &experimentScreen{name: name, st: st, shared: shared,
			opts: expview.Options{Learner: learner, Predict: predictQuestion(course, name)}}
		e, _ := etcd.(embedetcd.Etcd)
		var failed error
		if holder != nil {
			_, failed = holder.state()
		}
		switch {
		case e != nil:
			return s, s.build(e)
		case shared != "" && failed != nil:
			s.ask = failed
			return s, nil
		case shared != "":
			s.waiting = true // for EtcdReadyMsg
			return s, nil
		}
		return s, s.build(nil)
	}
}

// runsOn says in words which etcd a run of sc on etcd uses (see
// experiment.Run.connect).
func runsOn(sc *experiment.Scenario, etcd embedetcd.Etcd) string {
	_, remote := etcd.(*embedetcd.Remote)
	switch {
	case remote:
		return "the shared etcd at " + strings.Join(etcd.Endpoints(), ",")
	case sc.NeedsCluster:
		return "an in-process 3-member etcd cluster started for this run"
	case sc.NeedsOwnServer || etcd == nil:
		return "an in-process etcd started for this run"
	}
	return "the playground's in-process etcd (" + strings.Join(etcd.Endpoints(), ",") + ")"
}

// predictQuestion finds the course's predict question about experiment.
func predictQuestion(course *lessons.Course, experimentName string) *quiz.Question {
	if course == nil {
		return nil
	}
	for _, l := range course.Lessons {
		if l.Quiz == nil {
			continue
		}
		for _, q := range l.Quiz.Questions {
			if q.Kind == quiz.Predict && q.Experiment == experimentName {
				return q
			}
		}
	}
	return nil
}

// experimentScreen adapts expview.Model to the root's Screen interface,
// with a line on top that says which etcd the run uses. While the shared
// cluster is still connecting it waits; when that failed it asks before
// running on an in-process etcd instead.
type experimentScreen struct {
	name    string
	shared  string // the external cluster's endpoints, "" when none
	opts    expview.Options
	m       expview.Model
	built   bool
	on      string // which etcd, for the top line
	waiting bool   // for the shared cluster to answer
	ask     error  // the shared cluster failed: asking before falling back
	err     error  // the experiment does not exist
	st      theme.Styles
	w, h    int
}

var fallbackKey = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "run on an in-process etcd instead"))

func (s *experimentScreen) build(etcd embedetcd.Etcd) tea.Cmd {
	s.waiting, s.ask = false, nil
	s.opts.Etcd = etcd
	m, err := expview.New(s.name, s.opts, s.st)
	if err != nil {
		s.err = err
		return nil
	}
	s.m, s.built = m, true
	if sc := experiment.Lookup(s.name); sc != nil {
		s.on = runsOn(sc, etcd)
	}
	s.m.SetSize(s.w, max(s.h-1, 1))
	return s.m.Init()
}

func (s *experimentScreen) Update(msg tea.Msg) (tui.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case tui.EtcdReadyMsg:
		if !s.waiting {
			break
		}
		if e, ok := msg.Etcd.(embedetcd.Etcd); ok && e != nil && msg.Err == nil {
			return s, s.build(e)
		}
		s.waiting, s.ask = false, msg.Err
		if s.ask == nil {
			s.ask = errors.New("no etcd")
		}
		return s, nil
	case tea.KeyPressMsg:
		if s.ask != nil {
			if key.Matches(msg, fallbackKey) {
				return s, s.build(nil)
			}
			return s, nil
		}
	}
	if !s.built {
		return s, nil
	}
	var cmd tea.Cmd
	s.m, cmd = s.m.Update(msg)
	return s, cmd
}

func (s *experimentScreen) View() string {
	switch {
	case s.err != nil:
		return s.st.Error.Render(s.err.Error())
	case s.ask != nil:
		return wrapText(s.st.Error.Render("The shared etcd at "+s.shared+" is not reachable: "+s.ask.Error())+"\n\n"+
			s.st.Text.Render("This experiment can run on an in-process etcd instead: the same etcd code, on this machine only, so nothing of it shows on the shared cluster.")+"\n\n"+
			s.st.Accent.Render("y")+s.st.Text.Render(" run it on an in-process etcd · ")+s.st.Accent.Render("esc")+s.st.Text.Render(" back"), s.w)
	case s.waiting:
		return s.st.Muted.Render("Connecting to the shared etcd at " + s.shared + "; the experiment opens when it answers (esc: back).")
	}
	return s.st.Muted.Render(ansi.Truncate("Runs on "+s.on, s.w, "…")) + "\n" + s.m.View()
}

// wrapText wraps styled text to width w (no wrapping below 10 columns).
func wrapText(s string, w int) string {
	if w < 10 {
		return s
	}
	return ansi.Wrap(s, w, "")
}

func (s *experimentScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	if s.built {
		s.m.SetSize(w, max(h-1, 1))
	}
}

func (s *experimentScreen) SetStyles(st theme.Styles) {
	s.st = st
	if s.built {
		s.m.SetStyles(st)
	}
}

func (s *experimentScreen) ShortHelp() []key.Binding {
	if !s.built {
		if s.ask != nil {
			return []key.Binding{fallbackKey}
		}
		return nil
	}
	return s.m.Keys().ShortHelp()
}

func (s *experimentScreen) FullHelp() [][]key.Binding {
	if !s.built {
		return [][]key.Binding{s.ShortHelp()}
	}
	return s.m.Keys().FullHelp()
}

func (s *experimentScreen) Capturing() bool { return s.built && s.m.Capturing() }

func (s *experimentScreen) Close() {
	if s.built {
		s.m.Close()
	}
}
