package embedetcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/embedetcd/prefix"
)

// Etcd is what the rest of the playground needs from an etcd, embedded or
// not: where it is, clients to it, and a way to let go of it.
type Etcd interface {
	Endpoints() []string
	Client() (*clientv3.Client, error)
	Close() error
}

var (
	_ Etcd = (*Server)(nil)
	_ Etcd = (*Cluster)(nil)
	_ Etcd = (*Remote)(nil)
)

// Open returns the external cluster that s names (under the learner's
// prefix, see LearnerPrefix) when s names one, and otherwise starts an
// embedded server.
func Open(ctx context.Context, s access.Settings, opts ...Option) (Etcd, error) {
	if s.Remote() {
		return Connect(ctx, s, LearnerPrefix(s), opts...)
	}
	return Start(ctx, opts...)
}

// LearnerPrefix is the prefix a learner works under on the cluster s
// names: /playground/<etcd user>/ when s has a user (a class cluster gives
// each learner a user whose role covers exactly that prefix), else
// DefaultPrefix.
func LearnerPrefix(s access.Settings) string {
	if s.User != "" {
		return prefix.For(s.User)
	}
	return DefaultPrefix()
}

// Remote is an existing etcd cluster (a class's shared one, say) used under
// a per-learner key prefix: every client it hands out sees only keys below
// the prefix, so learners sharing a cluster cannot trip over each other.
type Remote struct {
	access access.Settings
	prefix string
	lg     *zap.Logger

	mu      sync.Mutex
	clients []*clientv3.Client
}

// DefaultPrefix is /playground/<user>/, from $PLAYGROUND_USER, else the
// login name (see package prefix).
func DefaultPrefix() string { return prefix.Default() }

// Connect checks that the cluster s names answers, with s's TLS files and
// user, and that the user may use keys under prefix; then returns it. Its
// errors say which of those failed (see access.Settings.Diagnose) and come
// within about 8 s at worst.
func Connect(ctx context.Context, s access.Settings, prefix string, opts ...Option) (*Remote, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("connect to etcd: %w", err)
	}
	c := newConfig(opts)
	r := &Remote{access: s, prefix: prefix, lg: c.zapLogger()}
	where := strings.Join(s.Endpoints, ",")
	if err := s.Preflight(ctx); err != nil {
		return nil, fmt.Errorf("connect to etcd at %s: %w", where, err)
	}
	var err error
	// A busy cluster can lose its leader while many learners log in at
	// once (a login is a raft proposal); that is worth another try, a
	// wrong password or certificate is not.
	for attempt := range 3 {
		if err = r.check(ctx); err == nil || !transient(err) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("connect to etcd at %s: %w", where, s.Diagnose(ctx, err))
	}
	return r, nil
}

// check logs in and reads one key under the prefix.
func (r *Remote) check(ctx context.Context) error {
	cli, err := r.Client()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, access.DialTimeout)
	defer cancel()
	_, err = cli.Get(cctx, "reachability-check")
	return err
}

// transient reports errors that another attempt may not meet.
func transient(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaderChanged) || errors.Is(err, rpctypes.ErrNoLeader) ||
		errors.Is(err, rpctypes.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), rpctypes.ErrLeaderChanged.Error())
}

// Access is how r reaches the cluster (endpoints, TLS files, user).
func (r *Remote) Access() access.Settings { return r.access }

// Prefix is the key prefix every client of r works under.
func (r *Remote) Prefix() string { return r.prefix }

// Endpoints returns the cluster's client URLs as given.
func (r *Remote) Endpoints() []string { return r.access.Endpoints }

// Client returns a client whose keys, watches and leases live under the
// prefix. Close closes it.
func (r *Remote) Client() (*clientv3.Client, error) {
	cli, err := r.access.New(r.lg)
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	cli.KV = namespace.NewKV(cli.KV, r.prefix)
	cli.Watcher = namespace.NewWatcher(cli.Watcher, r.prefix)
	cli.Lease = namespace.NewLease(cli.Lease, r.prefix)
	r.mu.Lock()
	r.clients = append(r.clients, cli)
	r.mu.Unlock()
	return cli, nil
}

// Close closes every client handed out; the cluster itself keeps running.
func (r *Remote) Close() error {
	r.mu.Lock()
	clients := r.clients
	r.clients = nil
	r.mu.Unlock()
	var errs []error
	for _, c := range clients {
		if err := c.Close(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
