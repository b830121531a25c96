package embedetcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"

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

// Open returns the external cluster at endpoints (under DefaultPrefix) when
// endpoints is not empty, and otherwise starts an embedded server.
func Open(ctx context.Context, endpoints []string, opts ...Option) (Etcd, error) {
	if len(endpoints) > 0 {
		return Connect(ctx, endpoints, DefaultPrefix(), opts...)
	}
	return Start(ctx, opts...)
}

// Remote is an existing etcd cluster (a class's shared one, say) used under
// a per-learner key prefix: every client it hands out sees only keys below
// the prefix, so learners sharing a cluster cannot trip over each other.
type Remote struct {
	endpoints []string
	prefix    string
	lg        *zap.Logger

	mu      sync.Mutex
	clients []*clientv3.Client
}

// DefaultPrefix is /playground/<user>/, from $PLAYGROUND_USER, else the
// login name (see package prefix).
func DefaultPrefix() string { return prefix.Default() }

// Connect checks that the cluster at endpoints answers and returns it.
func Connect(ctx context.Context, endpoints []string, prefix string, opts ...Option) (*Remote, error) {
	c := newConfig(opts)
	r := &Remote{endpoints: endpoints, prefix: prefix, lg: c.zapLogger()}
	cli, err := r.Client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, "reachability-check"); err != nil {
		r.Close()
		return nil, fmt.Errorf("connect to etcd at %s: %w", strings.Join(endpoints, ","), err)
	}
	return r, nil
}

// Prefix is the key prefix every client of r works under.
func (r *Remote) Prefix() string { return r.prefix }

// Endpoints returns the cluster's client URLs as given.
func (r *Remote) Endpoints() []string { return r.endpoints }

// Client returns a client whose keys, watches and leases live under the
// prefix. Close closes it.
func (r *Remote) Client() (*clientv3.Client, error) {
	cli, err := newClient(r.endpoints, r.lg)
	if err != nil {
		return nil, err
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
