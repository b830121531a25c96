package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Interrupted is the cause of a context cancelled by a signal (see
// WithSignals).
type Interrupted struct{ Signal os.Signal }

func (i *Interrupted) Error() string { return "interrupted by " + i.Signal.String() }

// WithSignals returns a context cancelled when SIGINT or SIGTERM arrives,
// with an *Interrupted as its cause, so Main can exit 130 or 143. Only the
// first signal is caught: a second one gets the default action and ends
// the program at once, whatever it is doing.
func WithSignals(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&Interrupted{Signal: s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}

// interruptedCode is the exit code for a context a signal cancelled:
// 128 plus the signal's number, as shells report it.
func interruptedCode(ctx context.Context) (int, bool) {
	var in *Interrupted
	if !errors.As(context.Cause(ctx), &in) {
		return 0, false
	}
	if s, ok := in.Signal.(syscall.Signal); ok {
		return 128 + int(s), true
	}
	return 130, true
}

// parseEndpoints splits a comma-separated list of etcd client URLs and
// checks each one now, so a typo fails at once instead of as a timeout
// later: each needs an http or https scheme and a host with a port. A bare
// host:port is taken as http://host:port.
func parseEndpoints(list string) ([]string, error) {
	var eps []string
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !strings.Contains(e, "://") {
			// host:port, as etcdctl accepts it, means plain http.
			if h, p, err := net.SplitHostPort(e); err == nil && h != "" && p != "" {
				e = "http://" + e
			}
		}
		if err := checkEndpoint(e); err != nil {
			return nil, err
		}
		eps = append(eps, e)
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("%q names no endpoint; give URLs like http://127.0.0.1:2379", list)
	}
	return eps, nil
}

func checkEndpoint(e string) error {
	u, err := url.Parse(e)
	if err != nil {
		return fmt.Errorf("%q is not a URL (%v); give URLs like http://127.0.0.1:2379", e, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: the scheme must be http:// or https://, like http://127.0.0.1:2379", e)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q names no host; give URLs like http://127.0.0.1:2379", e)
	}
	if p, err := strconv.Atoi(u.Port()); u.Port() != "" && (err != nil || p < 1 || p > 65535) {
		return fmt.Errorf("%q: the port must be a number from 1 to 65535", e)
	}
	if u.Port() == "" {
		return fmt.Errorf("%q names no port; etcd's client port is usually 2379: http://%s:2379", e, u.Hostname())
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: an etcd endpoint is scheme://host:port and nothing more", e)
	}
	return nil
}
