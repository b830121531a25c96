package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/atomicfile"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/pki"
	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/tui/classboard"
)

func init() {
	Register(&Command{
		Name:    "class",
		Usage:   "class setup|remove|status|verify|repair ...",
		Summary: "run a class on a shared etcd cluster (instructors; needs --user root)",
		Help: `Subcommands (connect with the global flags, as etcd's root user):
  class setup --learners FILE [--out DIR] [--format json|env]
                     [--learner-endpoints URLS] [--allow-etcd-3.4]
      For each learner in FILE (one a line: NAME or NAME PASSWORD), an etcd
      user and a role that may read and write /playground/NAME/ only. A
      password is generated unless given. Settings to hand out are written
      to DIR (default class-settings): NAME.json (use with --class), or
      NAME.env plus ca.crt. Running it again changes nothing. It refuses
      etcd older than 3.5 (learners could see and revoke each other's
      leases) unless --allow-etcd-3.4, and warns when the cluster runs
      without a quota or compaction of its own (docs/class.md).
  class remove (--learners FILE | NAME...) [--purge]
      Takes users, roles and roster entries away; --purge also deletes
      every key under their prefixes.
  class certs --hosts HOST,... [--out DIR]
      A CA and one certificate for the cluster's members (every host name
      or IP address they are reached by), for etcd's --cert-file and
      --peer-cert-file; learners get only ca.crt. Needs no cluster.
  class status [--plain | --json | --csv]
      Every learner's lessons, quizzes and labs, updated live as they
      work. --plain, --json and --csv print it once (for grade books).
      A summary the course cannot have produced shows as invalid. Each
      pass shows as verified, claimed (not verified yet) or refused.
      Each learner's bytes under their prefix are checked against
      --budget SIZE (default 64MiB; etcd has no quota per user): those
      over it are named, with the class repair that trims them.
  class verify [NAME...] [--timeout D]
      Regrades every lab file learners submitted with a pass and not yet
      judged, with the course built into this program (only the submitted
      file is the learner's; no checkout is needed), each in a child
      process of its own (own process group, temporary home, CPU and time
      limits), and records the verdict where only root can write.
  class repair [NAME...] [--budget SIZE]
      After a learner filled the cluster (NOSPACE: nobody can save): trims
      the named learners (none: every learner over the budget) back to the
      budget, their largest keys first (their summary and submissions
      kept), compacts the history, defragments every member, disarms the
      alarm.

Authentication must be on (class setup says how to turn it on).
Exit codes: 0 done, 1 failed, 2 bad usage.`,
		Run: runClass,
	})
}

func runClass(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("class needs a subcommand: setup, remove, status, verify, repair or certs")
	}
	sub, rest := args[0], args[1:]
	if sub == "certs" {
		return classCerts(env, rest)
	}
	run, ok := map[string]func(context.Context, *Env, []string) error{
		"setup": classSetup, "remove": classRemove, "status": classStatus,
		"repair": classRepair, "verify": classVerify,
	}[sub]
	// A misspelt subcommand is named as such, not sent to find a
	// cluster that would not make it known either.
	if !ok {
		return Usagef("unknown class subcommand %q: want setup, remove, status, verify, repair or certs", sub)
	}
	if !env.Etcd.Remote() {
		return Usagef("class %s works on a shared cluster: pass --etcd-endpoints (and --cacert, --user root)", sub)
	}
	return run(ctx, env, rest)
}

func classRepair(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("class repair", flag.ContinueOnError)
	budget := budgetFlag(fs)
	names, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	root, err := rootClient(ctx, env.Etcd)
	if err != nil {
		return err
	}
	defer root.Close()
	done, err := class.Repair(ctx, root, class.RepairOptions{Budget: int64(*budget), Learners: names})
	for _, line := range done {
		fmt.Fprintln(env.Stdout, line)
	}
	if err != nil {
		return env.Etcd.Explain(err)
	}
	return nil
}

// byteSize is a flag of bytes written as 64MiB, 512KiB, 2GiB or a plain
// number.
type byteSize int64

func (b *byteSize) String() string { return fmt.Sprint(int64(*b)) }

func (b *byteSize) Set(s string) error {
	units := []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}, {"", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("want a size like 64MiB, not %q", s)
			}
			*b = byteSize(v * u.n)
			return nil
		}
	}
	return nil
}

// budgetFlag is class status's and class repair's --budget.
func budgetFlag(fs *flag.FlagSet) *byteSize {
	b := byteSize(class.DefaultBudget)
	fs.Var(&b, "budget", "what one learner may keep under their prefix (64MiB, 512KiB...)")
	return &b
}

func classCerts(env *Env, args []string) error {
	fs := flag.NewFlagSet("class certs", flag.ContinueOnError)
	hosts := fs.String("hosts", "", "host names and IP addresses of the members")
	out := fs.String("out", "class-certs", "folder for the files")
	args, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *hosts == "" || len(args) > 0 {
		return Usagef("class certs --hosts HOST,... [--out DIR]")
	}
	names := []string{"127.0.0.1", "localhost"}
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(names, h) {
			names = append(names, h)
		}
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return fmt.Errorf("class certs: %w", err)
	}
	ca, err := pki.NewCA("playground class CA")
	if err != nil {
		return err
	}
	caFile, err := ca.WriteCert(*out)
	if err != nil {
		return fmt.Errorf("class certs: %w", err)
	}
	pair, err := ca.Server("etcd", names)
	if err != nil {
		return err
	}
	cert, key, err := pair.Write(*out, "server")
	if err != nil {
		return fmt.Errorf("class certs: %w", err)
	}
	fmt.Fprintf(env.Stdout, "%s   the CA: give it to everyone (--cacert); valid %d days\n", caFile, int(pki.Validity.Hours()/24))
	fmt.Fprintf(env.Stdout, "%s   the members' certificate, for %s\n%s   its key: keep it on the members only\n", cert, strings.Join(names, ", "), key)
	return nil
}

// rootClient connects with the instructor's settings, explaining failures.
func rootClient(ctx context.Context, s access.Settings) (*clientv3.Client, error) {
	if err := s.Preflight(ctx); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", strings.Join(s.Endpoints, ","), err)
	}
	cli, err := s.New(nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", strings.Join(s.Endpoints, ","), s.Diagnose(ctx, err))
	}
	return cli, nil
}

func classSetup(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("class setup", flag.ContinueOnError)
	file := fs.String("learners", "", "learners file")
	out := fs.String("out", "class-settings", "folder for the settings to hand out")
	format := fs.String("format", "json", "json or env")
	learnerEps := fs.String("learner-endpoints", "", "endpoints the learners use, if not the ones you connect to")
	allowOld := fs.Bool("allow-etcd-3.4", false, "run a class on etcd 3.4, whose leases learners can see and revoke across prefixes")
	args, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *file == "" || len(args) > 0 {
		return Usagef("class setup --learners FILE [--out DIR] [--format json|env]")
	}
	if *format != "json" && *format != "env" {
		return Usagef("--format is json or env, not %q", *format)
	}
	learners, err := readLearners(*file)
	if err != nil {
		return err
	}
	handout := access.Settings{Endpoints: env.Etcd.Endpoints, CACert: env.Etcd.CACert, CACertPEM: env.Etcd.CACertPEM}
	if *learnerEps != "" {
		if handout.Endpoints, err = parseEndpoints(*learnerEps); err != nil {
			return Usagef("--learner-endpoints: %v", err)
		}
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return fmt.Errorf("class setup: %w", err)
	}
	root, err := rootClient(ctx, env.Etcd)
	if err != nil {
		return err
	}
	defer root.Close()
	srv, err := class.CheckServer(ctx, env.Etcd, root, *allowOld)
	if errors.Is(err, class.ErrOldEtcd) {
		fmt.Fprintf(env.Stderr, "class setup: %v\n", err)
		return &ExitError{Code: 1}
	}
	if err != nil {
		return fmt.Errorf("%w", env.Etcd.Explain(err))
	}
	for _, w := range srv.Warnings {
		fmt.Fprintln(env.Stderr, w)
	}
	actions, err := class.Setup(ctx, env.Etcd, root, learners, knownPasswords(*out, learners))
	for _, a := range actions {
		line, werr := writeHandout(*out, *format, handout, a)
		if werr != nil {
			return fmt.Errorf("class setup: %w", werr)
		}
		fmt.Fprintln(env.Stdout, line)
	}
	if errors.Is(err, class.ErrAuthDisabled) {
		fmt.Fprintf(env.Stderr, "%v.\n%s\n", err, class.EnableAuthHelp)
		return &ExitError{Code: 1}
	}
	if err != nil {
		return fmt.Errorf("%w", env.Etcd.Explain(err))
	}
	changed := 0
	for _, a := range actions {
		if len(a.Changes) > 0 {
			changed++
		}
	}
	fmt.Fprintf(env.Stdout, "%d learners, %d changed; settings in %s\n", len(actions), changed, *out)
	return nil
}

func readLearners(file string) ([]class.Learner, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("learners file: %w", err)
	}
	defer f.Close()
	return class.ParseLearners(f, file)
}

// knownPasswords reads passwords from settings written by an earlier
// setup, so running setup again rewrites the same files.
func knownPasswords(dir string, learners []class.Learner) map[string]string {
	known := map[string]string{}
	for _, l := range learners {
		if s, err := access.LoadFile(filepath.Join(dir, l.Name+".json")); err == nil && s.User == l.Name {
			known[l.Name] = s.Password
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, l.Name+".env")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "export "+access.EnvPassword+"="); ok {
					known[l.Name] = strings.Trim(v, "'")
				}
			}
		}
	}
	return known
}

// writeHandout writes one learner's settings and says what was done.
func writeHandout(dir, format string, base access.Settings, a class.Action) (string, error) {
	what := "no change"
	if len(a.Changes) > 0 {
		what = strings.Join(a.Changes, ", ")
	}
	if a.PasswordUnknown {
		return fmt.Sprintf("%-16s %s; its password is not known here, so no settings were written (give one in the learners file)", a.Learner, what), nil
	}
	s := base
	s.User, s.Password = a.Learner, a.Password
	var path string
	switch format {
	case "json":
		path = filepath.Join(dir, a.Learner+".json")
		if err := s.WriteFile(path); err != nil {
			return "", err
		}
	case "env":
		ca := ""
		if len(s.CACertPEM) > 0 || s.CACert != "" {
			pem := s.CACertPEM
			if len(pem) == 0 {
				var err error
				if pem, err = os.ReadFile(s.CACert); err != nil {
					return "", err
				}
			}
			ca = "ca.crt"
			if err := os.WriteFile(filepath.Join(dir, ca), pem, 0o644); err != nil {
				return "", err
			}
		}
		path = filepath.Join(dir, a.Learner+".env")
		if err := atomicfile.Write(path, []byte(s.EnvFile(ca)), 0o600); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%-16s %s -> %s", a.Learner, what, path), nil
}

func classRemove(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("class remove", flag.ContinueOnError)
	file := fs.String("learners", "", "learners file")
	purge := fs.Bool("purge", false, "also delete their keys")
	args, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	names := args
	if *file != "" {
		learners, err := readLearners(*file)
		if err != nil {
			return err
		}
		for _, l := range learners {
			names = append(names, l.Name)
		}
	}
	if len(names) == 0 {
		return Usagef("class remove (--learners FILE | NAME...) [--purge]")
	}
	root, err := rootClient(ctx, env.Etcd)
	if err != nil {
		return err
	}
	defer root.Close()
	actions, err := class.Remove(ctx, root, names, *purge)
	for _, a := range actions {
		what := "nothing to remove"
		if len(a.Changes) > 0 {
			what = strings.Join(a.Changes, ", ")
		}
		fmt.Fprintf(env.Stdout, "%-16s %s\n", a.Learner, what)
	}
	if err != nil {
		return env.Etcd.Explain(err)
	}
	return nil
}

func classStatus(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("class status", flag.ContinueOnError)
	budget := budgetFlag(fs)
	plain := fs.Bool("plain", false, "print a table once")
	asJSON := fs.Bool("json", false, "print JSON once")
	asCSV := fs.Bool("csv", false, "print CSV once")
	args, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return Usagef("unexpected argument %q", args[0])
	}
	course, err := classCourse(env)
	if err != nil {
		return err
	}
	root, err := rootClient(ctx, env.Etcd)
	if err != nil {
		return err
	}
	defer root.Close()
	board, err := class.LoadBoard(ctx, root)
	if err != nil {
		return env.Etcd.Explain(err)
	}
	rows := class.Rows(course, board.Snapshot(), time.Now())
	if *asJSON || *asCSV || *plain {
		usage, err := class.MeasureClass(ctx, root, board.Learners(), int64(*budget))
		if err != nil {
			return env.Etcd.Explain(err)
		}
		class.AddUsage(rows, usage, int64(*budget))
	}
	board.SetBudget(int64(*budget))
	switch {
	case *asJSON:
		return class.WriteJSON(env.Stdout, course, rows)
	case *asCSV:
		return class.WriteCSV(env.Stdout, course, rows)
	case *plain:
		return class.WritePlain(env.Stdout, course, rows)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes := make(chan string, 256)
	watchErr := make(chan error, 1)
	go func() {
		err := board.Watch(wctx, root, func(name string) {
			select {
			case changes <- name:
			case <-wctx.Done():
			}
		})
		close(changes)
		watchErr <- err
	}()
	m := classboard.New(classboard.Options{Course: course, Snapshot: board.Snapshot, State: board.State, Changes: changes, Where: strings.Join(env.Etcd.Endpoints, ",")})
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(env.Stdin), tea.WithOutput(env.Stdout)).Run()
	cancel()
	if werr := <-watchErr; werr != nil && !errors.Is(werr, context.Canceled) {
		fmt.Fprintf(env.Stderr, "class status: %v\n", env.Etcd.Explain(werr))
	}
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// classCourse is the course as the board measures it.
func classCourse(env *Env) (class.Course, error) {
	c, _, err := loadCourse(env, "")
	if err != nil {
		return class.Course{}, err
	}
	var out class.Course
	seen := map[string]bool{}
	for _, l := range c.Lessons {
		out.Lessons = append(out.Lessons, class.CourseLesson{ID: l.ID, Pages: len(l.Pages)})
		for _, lab := range l.Labs {
			if !seen[lab] {
				seen[lab] = true
				out.Labs = append(out.Labs, lab)
			}
		}
	}
	return out, nil
}

// publishToClass sends the learner's summary to the class board when the
// playground is connected to a class cluster as a learner (a user other
// than root); otherwise it does nothing.
func publishToClass(ctx context.Context, env *Env, p *progress.Progress) error {
	s := env.Etcd
	if env.NoPublish || !s.Remote() || s.User == "" || s.User == "root" || p == nil {
		return nil
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
	course, err := classCourse(env)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return class.NewPublisher(cli.KV).Against(course).Publish(pctx, class.FromProgress(s.User, p))
}

// classPublisher publishes a learner's progress to the class board from
// the terminal interface: connecting in the background, retrying while the
// cluster is away, never blocking the screen.
type classPublisher struct {
	settings access.Settings
	course   *class.Course // nil: published summaries are merged unchecked
	offers   chan *progress.Progress
	done     chan struct{}
	status   chan string // what keeps progress off the board, "" when nothing; newest only
	said     string      // the last status sent (run's goroutines only, under mu)
	mu       sync.Mutex
}

// startClassPublisher returns nil when s is not a learner on a class
// cluster; otherwise a publisher that has already been offered first.
func startClassPublisher(env *Env, first *progress.Progress) *classPublisher {
	s := env.Etcd
	if env.NoPublish || !s.Remote() || s.User == "" || s.User == "root" {
		return nil
	}
	// said starts as no status at all, so the first check is sent even
	// when it finds nothing wrong.
	cp := &classPublisher{settings: s, offers: make(chan *progress.Progress, 1), done: make(chan struct{}), status: make(chan string, 1), said: "\x00"}
	if c, err := classCourse(env); err == nil { // the TUI loaded this course already
		cp.course = &c
	}
	go cp.run()
	cp.Offer(first)
	return cp
}

// Offer hands over a snapshot of the progress; a newer one replaces an
// older one not yet taken.
func (cp *classPublisher) Offer(p *progress.Progress) {
	if cp == nil || p == nil {
		return
	}
	for {
		select {
		case cp.offers <- p:
			return
		default:
		}
		select {
		case <-cp.offers: // drop the older snapshot
		default:
		}
	}
}

// Status delivers, each time it changes, what keeps the learner's
// progress from the class board in the status line's words (a refused
// login, a full cluster), and "" once it is gone. Nil for a playground
// that is not in a class.
func (cp *classPublisher) Status() <-chan string {
	if cp == nil {
		return nil
	}
	return cp.status
}

// say sends problem when it differs from the last one sent, replacing a
// status the screen has not taken yet.
func (cp *classPublisher) say(problem string) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if problem == cp.said {
		return
	}
	cp.said = problem
	select {
	case <-cp.status:
	default:
	}
	cp.status <- problem
}

// checkLogin asks the cluster every class.CheckEvery whether it still
// takes the learner's login, and looks at the publisher's last error (a
// full cluster refuses the summary), until ctx ends.
func (cp *classPublisher) checkLogin(ctx context.Context, kv clientv3.KV, pub *class.Publisher) {
	t := time.NewTicker(class.CheckEvery)
	defer t.Stop()
	for {
		problem := class.CheckLogin(ctx, kv)
		if problem == "" {
			problem = class.LearnerProblem(pub.Err())
		}
		if ctx.Err() != nil {
			return
		}
		cp.say(problem)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (cp *classPublisher) newPublisher(kv clientv3.KV) *class.Publisher {
	p := class.NewPublisher(kv)
	if cp.course != nil {
		p.Against(*cp.course)
	}
	return p
}

// Close flushes what is pending for up to wait.
func (cp *classPublisher) Close(wait time.Duration) {
	if cp == nil {
		return
	}
	close(cp.offers)
	select {
	case <-cp.done:
	case <-time.After(wait):
	}
}

func (cp *classPublisher) run() {
	defer close(cp.done)
	var pub *class.Publisher
	var remote *embedetcd.Remote
	checks, stopChecks := context.WithCancel(context.Background())
	defer stopChecks()
	defer func() {
		if pub != nil {
			pub.Close(2 * time.Second)
		}
		if remote != nil {
			remote.Close()
		}
	}()
	backoff := time.Second
	for p := range cp.offers {
		for pub == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err := embedetcd.Connect(ctx, cp.settings, embedetcd.LearnerPrefix(cp.settings))
			cancel()
			if err == nil {
				cli, cerr := r.Client()
				if cerr == nil {
					remote, pub = r, cp.newPublisher(cli.KV).Start()
					go cp.checkLogin(checks, cli.KV, pub)
					break
				}
				r.Close()
				err = cerr
			}
			cp.say(class.LearnerProblem(err))
			time.Sleep(backoff)
			backoff = min(2*backoff, 30*time.Second)
			select {
			case newer, ok := <-cp.offers:
				if !ok {
					return
				}
				p = newer
			default:
			}
		}
		pub.Offer(class.FromProgress(cp.settings.User, p))
	}
}
