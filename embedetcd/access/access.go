// Package access says how to reach an existing etcd cluster and prove who
// you are to it: endpoints, TLS files and a user, named the way etcdctl
// names them, so an instructor can hand out the settings they already use.
//
// It imports only the etcd client, so that the labs' graders can use it
// without linking the etcd server.
package access

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The environment variables that carry Settings to the playground and to
// the processes it starts (the labs' graders). They mirror etcdctl's
// ETCDCTL_* names.
const (
	EnvEndpoints = "PLAYGROUND_ETCD_ENDPOINTS"
	EnvCACert    = "PLAYGROUND_ETCD_CACERT"
	EnvCert      = "PLAYGROUND_ETCD_CERT"
	EnvKey       = "PLAYGROUND_ETCD_KEY"
	EnvUser      = "PLAYGROUND_ETCD_USER" // NAME or NAME:PASSWORD
	EnvPassword  = "PLAYGROUND_ETCD_PASSWORD"
	// EnvClass names a settings file (see LoadFile), as handed out by
	// `playground class setup`; the variables above override its fields.
	EnvClass = "PLAYGROUND_CLASS"
)

// DialTimeout bounds connecting and authenticating: a wrong address or a
// wrong certificate answers within it instead of hanging.
const DialTimeout = 5 * time.Second

// Settings is everything needed to talk to one etcd cluster.
type Settings struct {
	Endpoints []string // client URLs, http:// or https://
	CACert    string   // file: CA bundle that signed the servers' certificates
	CACertPEM []byte   // the same inline (from a settings file); wins over CACert
	Cert      string   // file: client certificate (with Key), when the cluster checks them
	Key       string   // file: the client certificate's private key
	User      string   // etcd user name, when the cluster has auth enabled
	Password  string
	File      string // the settings file these came from, if any
}

// ErrNoEndpoints is returned by Validate for settings that name no cluster.
var ErrNoEndpoints = errors.New("access: no etcd endpoints")

// FromEnv reads Settings through getenv (os.Getenv in a program, a map in
// tests): the settings file named by PLAYGROUND_CLASS, if any, then the
// PLAYGROUND_ETCD_* variables over it.
func FromEnv(getenv func(string) string) (Settings, error) {
	var s Settings
	if f := getenv(EnvClass); f != "" {
		var err error
		if s, err = LoadFile(f); err != nil {
			return s, fmt.Errorf("$%s: %w", EnvClass, err)
		}
	}
	if eps := SplitEndpoints(getenv(EnvEndpoints)); len(eps) > 0 {
		s.Endpoints = eps
	}
	for _, f := range []struct {
		dst  *string
		name string
	}{{&s.CACert, EnvCACert}, {&s.Cert, EnvCert}, {&s.Key, EnvKey}} {
		if v := getenv(f.name); v != "" {
			*f.dst = v
		}
	}
	s.SetUser(getenv(EnvUser))
	if p := getenv(EnvPassword); p != "" {
		s.Password = p
	}
	return s, nil
}

// SplitEndpoints splits a comma-separated list of URLs, dropping blanks.
func SplitEndpoints(list string) []string {
	var eps []string
	for _, ep := range strings.Split(list, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	return eps
}

// SetUser takes etcdctl's --user form, NAME or NAME:PASSWORD. A password
// given separately (SetUser("bob") after Password was set) is kept.
func (s *Settings) SetUser(v string) {
	if v == "" {
		return
	}
	name, pass, ok := strings.Cut(v, ":")
	s.User = name
	if ok {
		s.Password = pass
	}
}

// Remote reports whether the settings name an existing cluster.
func (s Settings) Remote() bool { return len(s.Endpoints) > 0 }

// TLS reports whether connections use TLS: an https:// endpoint or any
// TLS file.
func (s Settings) TLS() bool {
	if s.CACert != "" || len(s.CACertPEM) > 0 || s.Cert != "" || s.Key != "" {
		return true
	}
	for _, ep := range s.Endpoints {
		if strings.HasPrefix(ep, "https://") {
			return true
		}
	}
	return false
}

// Env returns the settings as PLAYGROUND_ETCD_* entries for a child
// process's environment. File names are made absolute, since the child may
// run in another folder. Empty settings give no entries.
func (s Settings) Env() []string {
	if !s.Remote() {
		return nil
	}
	out := []string{EnvEndpoints + "=" + strings.Join(s.Endpoints, ",")}
	add := func(name, v string) {
		if v != "" {
			out = append(out, name+"="+v)
		}
	}
	add(EnvCACert, absPath(s.CACert))
	if len(s.CACertPEM) > 0 && s.CACert == "" {
		// A child cannot take the PEM inline: hand it the settings file.
		add(EnvClass, absPath(s.File))
	}
	add(EnvCert, absPath(s.Cert))
	add(EnvKey, absPath(s.Key))
	add(EnvUser, s.User)
	add(EnvPassword, s.Password)
	return out
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if !strings.HasPrefix(p, "/") {
		if wd, err := os.Getwd(); err == nil {
			return wd + "/" + p
		}
	}
	return p
}

// Validate checks the settings without contacting the cluster: every
// endpoint is an http(s) URL with a host and a port, TLS files exist and
// come in the pairs they need, a password has a user. Its errors are one
// line and say what to fix.
func (s Settings) Validate() error {
	if !s.Remote() {
		if s.TLS() || s.User != "" {
			return fmt.Errorf("%w: TLS files or a user were given, but no --etcd-endpoints", ErrNoEndpoints)
		}
		return ErrNoEndpoints
	}
	for _, ep := range s.Endpoints {
		if err := ValidateEndpoint(ep); err != nil {
			return err
		}
	}
	if (s.Cert == "") != (s.Key == "") {
		return errors.New("--cert and --key go together: the client certificate needs its private key")
	}
	for _, f := range []struct{ flag, path string }{{"--cacert", s.CACert}, {"--cert", s.Cert}, {"--key", s.Key}} {
		if f.path == "" {
			continue
		}
		st, err := os.Stat(f.path)
		if err != nil {
			return fmt.Errorf("%s %s: %w", f.flag, f.path, errors.Unwrap(err))
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s %s: not a regular file", f.flag, f.path)
		}
	}
	if s.Password != "" && s.User == "" {
		return errors.New("a password was given without a user: pass --user NAME")
	}
	if s.CACert != "" || len(s.CACertPEM) > 0 || s.Cert != "" {
		for _, ep := range s.Endpoints {
			if strings.HasPrefix(ep, "http://") {
				return fmt.Errorf("endpoint %s is plain http:// but TLS files were given: use https://", ep)
			}
		}
	}
	return nil
}

// ValidateEndpoint checks one client URL: http or https, a host, a port,
// nothing else.
func ValidateEndpoint(ep string) error {
	u, err := url.Parse(ep)
	if err != nil {
		return fmt.Errorf("endpoint %q is not a URL: %v", ep, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("endpoint %q: want http://HOST:PORT or https://HOST:PORT", ep)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("endpoint %q: want %s://HOST:PORT (etcd's client port is usually 2379)", ep, u.Scheme)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("endpoint %q: only scheme, host and port are allowed", ep)
	}
	return nil
}

// ClientConfig is a clientv3 configuration for these settings. It does not
// validate them (see Validate) but fails on TLS files it cannot load.
func (s Settings) ClientConfig(lg *zap.Logger) (clientv3.Config, error) {
	if lg == nil {
		lg = zap.NewNop()
	}
	cfg := clientv3.Config{
		Endpoints:   s.Endpoints,
		DialTimeout: DialTimeout,
		Username:    s.User,
		Password:    s.Password,
		Logger:      lg,
	}
	if s.TLS() {
		tc, err := s.TLSConfig()
		if err != nil {
			return cfg, err
		}
		cfg.TLS = tc
	}
	return cfg, nil
}

// New returns a client for these settings; on failure the error says what
// went wrong in the user's terms (see Explain).
func (s Settings) New(lg *zap.Logger) (*clientv3.Client, error) {
	cfg, err := s.ClientConfig(lg)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, s.Explain(err)
	}
	return cli, nil
}
