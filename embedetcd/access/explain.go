package access

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TLSConfig builds the client side of TLS from CACert, Cert and Key. With
// no CACert the system's roots are trusted.
func (s Settings) TLSConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	pem, from := s.CACertPEM, "the settings file's CA"
	if len(pem) == 0 && s.CACert != "" {
		var err error
		if pem, err = os.ReadFile(s.CACert); err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		from = "--cacert " + s.CACert
	}
	if len(pem) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in it", from)
		}
		tc.RootCAs = pool
	}
	if s.Cert != "" || s.Key != "" {
		pair, err := tls.LoadX509KeyPair(s.Cert, s.Key)
		if err != nil {
			return nil, fmt.Errorf("--cert %s / --key %s: %w", s.Cert, s.Key, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// The problems Explain and Diagnose tell apart. Each has its own sentinel
// so callers (and tests) can tell them apart with errors.Is.
var (
	ErrUnknownAuthority = errors.New("access: the server's certificate is not signed by the CA you trust")
	ErrCertHost         = errors.New("access: the server's certificate does not name the host you dialled")
	ErrClientCert       = errors.New("access: the server refused your client certificate")
	ErrNotTLS           = errors.New("access: the server does not speak TLS")
	ErrNeedsTLS         = errors.New("access: the server speaks TLS but the endpoint is http://")
	ErrWrongPassword    = errors.New("access: wrong user name or password")
	ErrNeedsUser        = errors.New("access: the cluster has authentication on and no user was given")
	ErrPermission       = errors.New("access: permission denied")
	ErrUnreachable      = errors.New("access: nothing answers at the endpoint")
)

// Explain turns an error from the etcd client into one line that says
// which problem it is and what to check. Errors it does not recognise come
// back unchanged.
func (s Settings) Explain(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case errors.Is(err, rpctypes.ErrAuthFailed) || strings.Contains(msg, rpctypes.ErrAuthFailed.Error()):
		return fmt.Errorf("%w for user %q at %s: check --user and the password (--user NAME:PASSWORD, the prompt, or %s)",
			ErrWrongPassword, s.User, s.where(), EnvPassword)
	case errors.Is(err, rpctypes.ErrUserEmpty) || errors.Is(err, rpctypes.ErrInvalidAuthToken) ||
		strings.Contains(msg, rpctypes.ErrUserEmpty.Error()):
		return fmt.Errorf("%w at %s: pass --user NAME (and a password) from the settings your instructor gave you", ErrNeedsUser, s.where())
	case errors.Is(err, rpctypes.ErrPermissionDenied) || strings.Contains(msg, rpctypes.ErrPermissionDenied.Error()):
		return fmt.Errorf("%w for user %q: it may only use keys under its own prefix; ask your instructor to check its role (playground class setup)", ErrPermission, s.User)
	case strings.Contains(msg, "certificate signed by unknown authority"):
		return fmt.Errorf("%w (at %s): check --cacert names the CA that signed the cluster's certificates", ErrUnknownAuthority, s.where())
	case strings.Contains(msg, "certificate is valid for") || strings.Contains(msg, "certificate is not valid for"):
		return fmt.Errorf("%w (at %s): dial the host name in the certificate, or ask for a certificate that names this one", ErrCertHost, s.where())
	case strings.Contains(msg, "bad certificate") || strings.Contains(msg, "certificate required") || strings.Contains(msg, "unknown certificate authority"):
		return fmt.Errorf("%w (at %s): check --cert and --key are the pair your instructor handed out", ErrClientCert, s.where())
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("%w at %s: use http:// for this cluster, or ask whether its TLS port is another one", ErrNotTLS, s.where())
	}
	return err
}

func (s Settings) where() string { return strings.Join(s.Endpoints, ",") }

// Diagnose explains err, and when the client only said that time ran out
// or the cluster is unavailable (gRPC keeps TLS failures to itself and
// retries until the deadline), it dials each endpoint itself to find the
// cause. It takes at most a few seconds.
func (s Settings) Diagnose(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if e := s.Explain(err); e != err {
		return e
	}
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "Unavailable") &&
		!strings.Contains(err.Error(), "deadline exceeded") {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var first error
	for _, ep := range s.Endpoints {
		perr := s.probe(ctx, ep)
		if perr == nil {
			return err // this one answers: the problem is elsewhere
		}
		if first == nil {
			first = perr
		}
	}
	if first != nil {
		return first
	}
	return err
}

// Preflight dials every endpoint the way the client will (TCP, then TLS
// with the settings' files) and returns the first endpoint's problem when
// none of them works: a wrong CA or a closed port is then named in
// milliseconds, where the client would retry until its deadline and only
// say that time ran out. One working endpoint is enough (a member may be
// down), so the endpoints are tried at once, each with the whole budget:
// a member that swallows connections (a stopped process, a firewall that
// drops) must not use up the time of the members behind it in the list.
func (s Settings) Preflight(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	errs := make([]error, len(s.Endpoints))
	done := make(chan int, len(s.Endpoints))
	for i, ep := range s.Endpoints {
		go func() {
			errs[i] = s.probe(ctx, ep)
			done <- i
		}()
	}
	for range s.Endpoints {
		if i := <-done; errs[i] == nil {
			return nil // cancel (deferred) ends the other probes
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// probe dials one endpoint the way the client would and reports what
// stands in the way, or nil when a TLS (or plain TCP) session comes up.
func (s Settings) probe(ctx context.Context, ep string) error {
	u, err := url.Parse(ep)
	if err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return fmt.Errorf("%w: %s (%v): check the address and that the cluster is running", ErrUnreachable, ep, trimOp(err))
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if u.Scheme == "http" {
		// A plain endpoint that answers a TLS hello is a TLS port.
		tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only asks whether TLS is spoken
		if tc.HandshakeContext(ctx) == nil {
			return fmt.Errorf("%w: %s: use https:// (and --cacert)", ErrNeedsTLS, ep)
		}
		return nil
	}
	cfg, err := s.TLSConfig()
	if err != nil {
		return err
	}
	cfg.ServerName = u.Hostname()
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return s.Explain(fmt.Errorf("%s: %w", ep, err))
	}
	// With TLS 1.3 the server judges the client certificate after the
	// handshake; its verdict arrives as an alert on the first read.
	tc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var b [1]byte
	if _, err := tc.Read(b[:]); err != nil && strings.Contains(err.Error(), "tls:") {
		return s.Explain(fmt.Errorf("%s: %w", ep, err))
	}
	return nil
}

func trimOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// ClientConfigVia is ClientConfig for a client that reaches the cluster
// through local TCP proxies (the playground's fault proxies) listening at
// proxies (host:port). TLS passes through them untouched, and the servers'
// certificates are still checked, against the names of the real endpoints
// rather than the proxies' loopback addresses.
func (s Settings) ClientConfigVia(proxies []string, lg *zap.Logger) (clientv3.Config, error) {
	cfg, err := s.ClientConfig(lg)
	if err != nil {
		return cfg, err
	}
	scheme := "http://"
	if cfg.TLS != nil {
		scheme = "https://"
	}
	cfg.Endpoints = make([]string, len(proxies))
	for i, p := range proxies {
		cfg.Endpoints[i] = scheme + p
	}
	if cfg.TLS == nil {
		return cfg, nil
	}
	var hosts []string
	for _, ep := range s.Endpoints {
		if u, err := url.Parse(ep); err == nil {
			hosts = append(hosts, u.Hostname())
		}
	}
	roots := cfg.TLS.RootCAs
	// Go's own check would compare the certificate with the proxy's
	// address; this one does the same chain check with the real names.
	cfg.TLS.InsecureSkipVerify = true //nolint:gosec // verified below
	cfg.TLS.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		leaf := cs.PeerCertificates[0]
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
			return err
		}
		for _, h := range hosts {
			if leaf.VerifyHostname(h) == nil {
				return nil
			}
		}
		return fmt.Errorf("x509: certificate is not valid for any of %s", strings.Join(hosts, ", "))
	}
	return cfg, nil
}
