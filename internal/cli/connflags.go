package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/ownership-election/playground/embedetcd/access"
)

// connection holds the global flags that say how to reach an existing
// etcd cluster, named as etcdctl names them.
type connection struct {
	cacert, cert, key, user, class *string
}

func connFlags(fs *flag.FlagSet) *connection {
	return &connection{
		cacert: fs.String("cacert", "", "CA certificate `FILE` for https:// endpoints"),
		cert:   fs.String("cert", "", "client certificate `FILE`"),
		key:    fs.String("key", "", "client key `FILE`"),
		user:   fs.String("user", "", "etcd user `NAME[:PASSWORD]`"),
		class:  fs.String("class", "", "settings `FILE` handed out by the instructor"),
	}
}

// settings combines, from weakest to strongest: the settings file of
// $PLAYGROUND_CLASS, the PLAYGROUND_ETCD_* variables, --class, and the
// other flags. A user without a password is asked for one when stdin is a
// terminal. The result is validated; errors are usage errors.
func (c *connection) settings(endpoints string, getenv func(string) string, stdin io.Reader, stderr io.Writer) (access.Settings, error) {
	s, err := access.FromEnv(getenv)
	if err != nil {
		return s, err
	}
	if *c.class != "" {
		f, err := access.LoadFile(*c.class)
		if err != nil {
			return s, fmt.Errorf("--class: %w", err)
		}
		s = f
	}
	if endpoints != "" {
		eps, err := parseEndpoints(endpoints)
		if err != nil {
			return s, fmt.Errorf("--etcd-endpoints: %w", err)
		}
		s.Endpoints = eps
	}
	if *c.cacert != "" {
		s.CACert, s.CACertPEM = *c.cacert, nil
	}
	if *c.cert != "" {
		s.Cert = *c.cert
	}
	if *c.key != "" {
		s.Key = *c.key
	}
	s.SetUser(*c.user)
	if !s.Remote() && !s.TLS() && s.User == "" {
		return s, nil // the embedded etcd
	}
	if s.User != "" && s.Password == "" {
		p, err := askPassword(s.User, stdin, stderr)
		if err != nil {
			return s, err
		}
		s.Password = p
	}
	if err := s.Validate(); err != nil {
		if errors.Is(err, access.ErrNoEndpoints) {
			return s, fmt.Errorf("%w (pass --etcd-endpoints or --class)", err)
		}
		return s, err
	}
	return s, nil
}

// askPassword reads a password without echo from a terminal on stdin.
func askPassword(user string, stdin io.Reader, stderr io.Writer) (string, error) {
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		// The variable first: a password on the command line is visible
		// to every user of the machine in ps.
		return "", fmt.Errorf("no password for etcd user %q: set %s (or run in a terminal to be asked; --user %s:PASSWORD works too, but shows in ps)", user, access.EnvPassword, user)
	}
	fmt.Fprintf(stderr, "etcd password for %s: ", user)
	b, err := term.ReadPassword(f.Fd())
	fmt.Fprintln(stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("empty password for etcd user %q", user)
	}
	return string(b), nil
}
