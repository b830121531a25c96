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
	"time"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/embedetcd/prefix"

	"github.com/ownership-election/playground/internal/sentence"
	"github.com/ownership-election/playground/internal/tui/text"
)

// Command is one subcommand of playground.
type Command struct {
	Name    string // "" is the default command (no arguments: the TUI)
	Usage   string // e.g. "check [DIR]"
	Summary string // one line for --help
	// Help is the rest of `playground NAME --help` after the usage and
	// summary lines: arguments, flags, exit codes. May be empty.
	Help string
	Run  func(ctx context.Context, env *Env, args []string) error
}

// Env is what a command gets from the outside world.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Etcd, when it names endpoints, points the playground at an existing
	// etcd cluster instead of the embedded one, with its TLS files and
	// user (--etcd-endpoints, --cacert, --cert, --key, --user, --class,
	// or the PLAYGROUND_ETCD_* variables).
	Etcd access.Settings
	// NoPublish keeps this learner's progress off the class board
	// (--no-publish); publishing is on by default on a class cluster.
	NoPublish bool
	// ContentDir, when set, replaces the embedded course (--content).
	ContentDir string
	// Learner is the learner's identity (prefix.Learner), resolved once.
	Learner string
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

// parseFlags parses a command's args with fs, the one parser every
// command uses: flags may come before, between or after the arguments
// ("class remove ada --purge", "grade 01 --json"), and "--" ends the
// flags, so an argument that starts with a dash follows it. It returns
// the arguments in their order; a bad flag is a UsageError.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, Usagef("%v", err)
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(rest, left...), nil
		}
		rest, args = append(rest, left[0]), left[1:]
	}
}

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
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Learner: prefix.Learner()}
	fs := flag.NewFlagSet("playground", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	endpoints := fs.String("etcd-endpoints", "", "comma-separated client URLs of an existing etcd cluster")
	conn := connFlags(fs)
	fs.BoolVar(&env.NoPublish, "no-publish", os.Getenv("PLAYGROUND_NO_PUBLISH") != "", "do not publish progress to the class board")
	fs.StringVar(&env.ContentDir, "content", "", "run on the course in `DIR` instead of the embedded one")
	help := fs.Bool("help", false, "show help")
	fs.BoolVar(help, "h", false, "show help")
	name, rest, err := parseGlobals(fs, args)
	if err != nil {
		fmt.Fprintf(stderr, "playground: %v (see playground --help)\n", err)
		return 2
	}
	settings, err := conn.settings(*endpoints, os.Getenv, stdin, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "playground: %v\n", err)
		return 2
	}
	env.Etcd = settings
	if *help || name == "help" {
		printHelp(stdout, fs)
		return 0
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
	if name != "" && wantsHelp(rest) {
		printCommandHelp(stdout, cmd)
		return 0
	}
	finished, err := runCommand(ctx, cmd, env, rest)
	var ue *UsageError
	var ee *ExitError
	if code, ok := interruptedCode(ctx); ok {
		// However the command ended, a signal asked it to: say so and
		// exit as a shell expects of a program stopped by that signal.
		if !finished {
			fmt.Fprintf(stderr, "playground: interrupted (%s did not finish cleaning up within %v)\n", cmd.Name, stopGrace)
		} else {
			fmt.Fprintln(stderr, "playground: interrupted")
		}
		return code
	}
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

// stopGrace is how long a command may take to wind down after Ctrl-C or
// SIGTERM before Main returns without it.
const stopGrace = time.Second

// runCommand runs cmd, but returns at most stopGrace after ctx is
// cancelled by a signal even if cmd has not returned (finished false): a
// command stuck in a system call that ignores ctx must not keep the
// program alive after the learner asked it to stop. What such a command
// leaves (an etcd data dir) is cleaned up by the next run.
func runCommand(ctx context.Context, cmd *Command, env *Env, args []string) (finished bool, err error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Run(ctx, env, args) }()
	select {
	case err := <-done:
		return true, err
	case <-ctx.Done():
	}
	if _, ok := interruptedCode(ctx); !ok {
		return true, <-done
	}
	select {
	case err := <-done:
		return true, err
	case <-time.After(stopGrace):
		return false, ctx.Err()
	}
}

// parseGlobals parses the global flags in fs wherever they are: before
// the command's name or among its arguments ("grade 01 --class ada.json"
// as well as "--class ada.json grade 01"), up to a "--". It returns the
// command's name and its arguments without the global flags. -h and
// --help after the name stay with the command (its own help).
func parseGlobals(fs *flag.FlagSet, args []string) (name string, rest []string, err error) {
	if err := fs.Parse(args); err != nil {
		return "", nil, err
	}
	left := fs.Args()
	if len(left) == 0 {
		return "", nil, nil
	}
	name, left = left[0], left[1:]
	var globals []string
	for i := 0; i < len(left); i++ {
		a := left[i]
		if a == "--" {
			rest = append(rest, left[i:]...)
			break
		}
		f := globalFlag(fs, a)
		if f == nil {
			rest = append(rest, a)
			continue
		}
		globals = append(globals, a)
		if isBool(f) || strings.Contains(a, "=") || i+1 == len(left) {
			continue
		}
		i++
		globals = append(globals, left[i])
	}
	if err := fs.Parse(globals); err != nil {
		return "", nil, err
	}
	return name, rest, nil
}

// globalFlag is the global flag that arg names ("-user", "--user=ada"),
// or nil for anything else, help included.
func globalFlag(fs *flag.FlagSet, arg string) *flag.Flag {
	n := strings.TrimLeft(arg, "-")
	if n == arg || len(arg)-len(n) > 2 {
		return nil
	}
	n, _, _ = strings.Cut(n, "=")
	if n == "h" || n == "help" {
		return nil
	}
	return fs.Lookup(n)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// wantsHelp reports whether a command's arguments ask for its help: -h,
// -help or --help anywhere before a "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// helpWidth is the width help fits: an 80-column terminal.
const helpWidth = 80

func printCommandHelp(w io.Writer, c *Command) {
	fmt.Fprintf(w, "%s\n\n%s\n", foldUsage("Usage: playground [global flags] "+c.Usage, helpWidth),
		text.Wrap(sentence.Capitalize(c.Summary)+".", helpWidth))
	if c.Help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.Help, "\n"))
	}
	fmt.Fprintln(w, "\nGlobal flags (before or after the command): see playground --help.")
}

func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "playground: leader election, locks, leases and fencing tokens on a real etcd.")
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
		helpItem(w, c.Usage, c.Summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags (before or after the command):")
	for _, f := range [][2]string{
		{"--etcd-endpoints URLS", "use an existing etcd cluster (also PLAYGROUND_ETCD_ENDPOINTS); keys then live under /playground/<user>/"},
		{"--cacert FILE", "CA that signed the cluster's certificates (https:// endpoints)"},
		{"--cert FILE, --key FILE", "client certificate and key, when the cluster asks for one"},
		{"--user NAME[:PASSWORD]", "etcd user (password: after the colon, PLAYGROUND_ETCD_PASSWORD, or asked for); each has a PLAYGROUND_ETCD_* variable"},
		{"--class FILE", "connect with the settings file your instructor handed out (also PLAYGROUND_CLASS); see docs/class.md"},
		{"--no-publish", "keep your progress off the class board (also PLAYGROUND_NO_PUBLISH=1)"},
		{"--content DIR", "use the course in DIR instead of the built-in one"},
		{"-h, --help", "show this help"},
	} {
		helpItem(w, f[0], f[1])
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "playground COMMAND --help shows a command's own flags.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 success, 1 failure, 2 bad usage or problems found by check,")
	fmt.Fprintln(w, "130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.")
}

// helpItem writes one line of --help's lists: name, then what it does,
// folded to the help's width under a column of its own; a name too long
// for the column stands on a line of its own.
func helpItem(w io.Writer, name, what string) {
	const column = 31 // "  " + a name of 28 + " "
	prefix := fmt.Sprintf("  %-28s ", name)
	if len(prefix) > column {
		fmt.Fprintln(w, "  "+name)
		prefix = strings.Repeat(" ", column)
	}
	fmt.Fprintln(w, text.Hang(prefix, what, helpWidth))
}

// foldUsage folds a usage line to width, breaking only between the
// words and bracketed groups of its arguments ("[--junit FILE]" stays
// whole); a continuation line is indented by four.
func foldUsage(usage string, width int) string {
	var groups []string
	depth, start := 0, 0
	for i, r := range usage {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ' ' && depth == 0:
			groups = append(groups, usage[start:i])
			start = i + 1
		}
	}
	groups = append(groups, usage[start:])
	var b strings.Builder
	line := 0
	for i, g := range groups {
		switch {
		case i == 0:
		case line+1+len(g) > width:
			b.WriteString("\n    ")
			line = 4
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(g)
		line += len(g)
	}
	return b.String()
}
