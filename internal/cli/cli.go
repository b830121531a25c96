// Package cli parses the playground's global flags and dispatches to its
// subcommands; each subcommand lives in a file of its own and registers
// itself, so cmd/playground stays a few lines of wiring.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Command is one subcommand of playground.
type Command struct {
	Name    string // "" is the default command (no arguments: the TUI)
	Usage   string // e.g. "check [DIR]"
	Summary string // one line for --help
	Run     func(ctx context.Context, env *Env, args []string) error
}

// Env is what a command gets from the outside world.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// EtcdEndpoints, when set, points the playground at an existing etcd
	// cluster instead of the embedded one (--etcd-endpoints or
	// PLAYGROUND_ETCD_ENDPOINTS).
	EtcdEndpoints []string
	// ContentDir, when set, replaces the embedded course (--content).
	ContentDir string
}

// UsageError reports bad command-line usage; it maps to exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ExitError asks for a specific exit code after the command has already
// printed what it had to say (for example `check` finding problems).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

var commands = map[string]*Command{}

// Register adds a command; it is called from init functions.
func Register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// Main runs the program with args (without the program name) and returns
// the process exit code: 0 success, 1 failure, 2 bad usage.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	fs := flag.NewFlagSet("playground", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	endpoints := fs.String("etcd-endpoints", os.Getenv("PLAYGROUND_ETCD_ENDPOINTS"), "comma-separated client URLs of an existing etcd cluster")
	fs.StringVar(&env.ContentDir, "content", "", "run on the course in `DIR` instead of the embedded one")
	help := fs.Bool("help", false, "show help")
	fs.BoolVar(help, "h", false, "show help")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "playground: %v (see playground --help)\n", err)
		return 2
	}
	if *endpoints != "" {
		for _, e := range strings.Split(*endpoints, ",") {
			if e = strings.TrimSpace(e); e != "" {
				env.EtcdEndpoints = append(env.EtcdEndpoints, e)
			}
		}
	}
	rest := fs.Args()
	if *help || (len(rest) > 0 && rest[0] == "help") {
		printHelp(stdout, fs)
		return 0
	}
	name := ""
	if len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	cmd, ok := commands[name]
	if !ok {
		if name == "" {
			printHelp(stdout, fs)
			return 0
		}
		fmt.Fprintf(stderr, "playground: unknown command %q (see playground --help)\n", name)
		return 2
	}
	err := cmd.Run(ctx, env, rest)
	var ue *UsageError
	var ee *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "playground %s: %s\n", cmd.Name, ue.Msg)
		return 2
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return 130
	default:
		fmt.Fprintf(stderr, "playground: %v\n", err)
		return 1
	}
}

func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "playground: learn leader election, locks, leases and fencing tokens on a real etcd.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w, "  playground [flags]             open the interactive course")
	fmt.Fprintln(w, "  playground [flags] COMMAND ...")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		c := commands[n]
		fmt.Fprintf(w, "  %-28s %s\n", c.Usage, c.Summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	fmt.Fprintln(w, "  --etcd-endpoints URLS        use an existing etcd cluster (also PLAYGROUND_ETCD_ENDPOINTS);")
	fmt.Fprintln(w, "                               keys then live under /playground/<user>/")
	fmt.Fprintln(w, "  --content DIR                use the course in DIR instead of the built-in one")
	fmt.Fprintln(w, "  -h, --help                   show this help")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 success, 1 failure, 2 bad usage or problems found by check.")
}
