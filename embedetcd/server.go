package embedetcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/ownership-election/playground/embedetcd/access"
)

// Server is one embedded etcd member serving clients on loopback.
type Server struct {
	cfg  *config
	lg   *zap.Logger
	e    *embed.Etcd
	dir  *dataDir
	name string

	mu      sync.Mutex
	clients []*clientv3.Client
	closed  bool
}

// Start starts a single-member etcd and returns once it serves requests,
// or with an error (never later than the start timeout, 10 s by default).
// By default it uses FastTicks, an ephemeral loopback port, a fresh data
// directory under the system temp dir and the state dir's etcd.log.
func Start(ctx context.Context, opts ...Option) (*Server, error) {
	c := newConfig(opts)
	if c.ticks == nil {
		c.ticks = &FastTicks
	}
	dir, err := newDataDir(dataParent(c))
	if err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	client := url.URL{Scheme: c.clientScheme(), Host: net.JoinHostPort(c.host, strconv.Itoa(c.port))}
	s := &Server{cfg: c, lg: c.zapLogger(), dir: dir, name: "playground"}
	ec, err := s.embedConfig(dir.path, peer, client)
	if err != nil {
		dir.remove()
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	ec.InitialCluster = s.name + "=" + peer.String()
	e, err := startEmbed(ctx, ec, c.startTimeout)
	if err != nil {
		dir.remove()
		return nil, fmt.Errorf("start etcd (log: %s): %w", c.logPath(), err)
	}
	s.e = e
	return s, nil
}

func (s *Server) embedConfig(dir string, peer, client url.URL) (*embed.Config, error) {
	ec := embed.NewConfig()
	ec.Name = s.name
	ec.Dir = dir
	ec.TickMs = s.cfg.ticks.TickMs
	ec.ElectionMs = s.cfg.ticks.ElectionMs
	ec.ListenPeerUrls = []url.URL{peer}
	ec.AdvertisePeerUrls = []url.URL{peer}
	ec.ListenClientUrls = []url.URL{client}
	ec.AdvertiseClientUrls = []url.URL{client}
	ec.ListenMetricsUrls = nil
	ec.UnsafeNoFsync = true
	ec.EnableGRPCGateway = false
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(s.lg)
	ec.LogLevel = "warn"
	// Passwords on these throwaway loopback servers (the least-privilege
	// experiment, class tests) need no brute-force resistance; the
	// default cost makes every user add and login take ~60 ms, more
	// under -race.
	ec.BcryptCost = uint(bcrypt.MinCost)
	ec.QuotaBackendBytes = s.cfg.quota
	if s.cfg.maxRequest > 0 {
		ec.MaxRequestBytes = s.cfg.maxRequest
	}
	if s.cfg.preVote != nil {
		ec.PreVote = *s.cfg.preVote
	}
	if s.cfg.leaseCheckpoints {
		gates := map[string]bool{"LeaseCheckpoint": true, "LeaseCheckpointPersist": true}
		// etcd's default gate is mutable (featuregate.MutableFeatureGate);
		// asking for the one method keeps etcd's pkg module out of go.mod.
		g, ok := ec.ServerFeatureGate.(interface{ SetFromMap(map[string]bool) error })
		if !ok {
			return nil, errors.New("lease checkpoint feature gates: etcd's feature gate cannot be set")
		}
		if err := g.SetFromMap(gates); err != nil {
			return nil, fmt.Errorf("lease checkpoint feature gates: %w", err)
		}
	}
	if s.cfg.compaction > 0 {
		ec.AutoCompactionMode = "periodic"
		ec.AutoCompactionRetention = s.cfg.compaction.String()
	}
	if t := s.cfg.tls; t != nil {
		ec.ClientTLSInfo = transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile}
		if t.ClientCertAuth {
			// etcd asks every client for a certificate as soon as it
			// has a CA to check them against.
			ec.ClientTLSInfo.TrustedCAFile = t.CAFile
			ec.ClientTLSInfo.ClientCertAuth = true
		}
	}
	return ec, nil
}

// startEmbed starts etcd and waits until it is ready, failed, timed out or
// ctx is done; on every path but success the server is stopped.
func startEmbed(ctx context.Context, ec *embed.Config, timeout time.Duration) (*embed.Etcd, error) {
	deadline := time.Now().Add(timeout)
	e, err := launchEmbed(ctx, ec, deadline)
	if err != nil {
		return nil, err
	}
	return e, waitReady(ctx, e, deadline)
}

// launchEmbed runs embed.StartEtcd (listeners bound, bootstrap done, raft
// not necessarily led yet), bounded by ctx and deadline.
func launchEmbed(ctx context.Context, ec *embed.Config, deadline time.Time) (*embed.Etcd, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	started := make(chan startResult, 1)
	go func() {
		// etcd panics on some start failures (a write-ahead log it cannot
		// create, for one); here that is an error like any other, not the
		// end of the program with the terminal left in raw mode.
		defer func() {
			if r := recover(); r != nil {
				started <- startResult{nil, fmt.Errorf("etcd failed while starting: %v", r)}
			}
		}()
		e, err := embed.StartEtcd(ec)
		started <- startResult{e, err}
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case r := <-started:
		return r.e, r.err
	case <-ctx.Done():
		// The caller removes the data dir next, and etcd exits the whole
		// process when its dir goes under it: let the start end (until
		// the deadline) and stop what it started first.
		select {
		case r := <-started:
			if r.e != nil {
				r.e.Server.HardStop()
				r.e.Close()
			}
		case <-timer.C:
			go closeWhenStarted(started)
		}
		return nil, ctx.Err()
	case <-timer.C:
		go closeWhenStarted(started)
		return nil, errors.New("etcd did not start before the deadline")
	}
}

// waitReady waits for e to serve requests; on failure it closes e.
func waitReady(ctx context.Context, e *embed.Etcd, deadline time.Time) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("etcd stopped while starting: %w", err)
	case <-ctx.Done():
		e.Close()
		return ctx.Err()
	case <-timer.C:
		e.Close()
		return errors.New("etcd not ready before the deadline")
	}
}

type startResult struct {
	e   *embed.Etcd
	err error
}

// closeWhenStarted stops a server whose start was abandoned.
func closeWhenStarted(started <-chan startResult) {
	if r := <-started; r.e != nil {
		r.e.Close()
	}
}

// Endpoints returns the client URLs, e.g. ["http://127.0.0.1:40123"]. A
// server listening on every address (WithListen("0.0.0.0", ...)) is given
// as its loopback address: "[::]" is where it listens, not an address a
// client can use.
func (s *Server) Endpoints() []string {
	out := make([]string, 0, len(s.e.Clients))
	for _, l := range s.e.Clients {
		addr := l.Addr().String()
		if tcp, ok := l.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
		}
		out = append(out, s.cfg.clientScheme()+"://"+addr)
	}
	return out
}

// Client returns a new client connected to this server that logs to the
// server's log file. Close closes it if the caller has not.
func (s *Server) Client() (*clientv3.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("etcd client: server closed")
	}
	cli, err := newClient(s.Endpoints(), s.cfg, s.lg)
	if err != nil {
		return nil, err
	}
	s.clients = append(s.clients, cli)
	return cli, nil
}

// Close stops the server and removes its data directory. Clients handed
// out by Client are closed first, which lets etcd stop in milliseconds
// even with live leases and sessions.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	clients := s.clients
	s.clients = nil
	s.mu.Unlock()
	closeClients(clients)
	if stopped, ok := stopEmbed(s.e, s.cfg.closeWait); !ok {
		// etcd still winds down in the background; its data dir goes
		// once it has (or with the next start, if the program ends first).
		go func() { <-stopped; s.dir.remove() }()
		return nil
	}
	return s.dir.remove()
}

func closeClients(clients []*clientv3.Client) {
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// stopEmbed closes e, waiting at most wait: connections we did not hand out
// would otherwise hold etcd's graceful stop for 5 s or more. stopped is
// closed once e has stopped; ok says it did within wait.
func stopEmbed(e *embed.Etcd, wait time.Duration) (stopped <-chan struct{}, ok bool) {
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
		return done, true
	case <-time.After(wait):
		return done, false
	}
}

func newClient(endpoints []string, c *config, lg *zap.Logger) (*clientv3.Client, error) {
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      lg,
	}
	if t := c.tls; t != nil {
		tc, err := access.Settings{CACert: t.CAFile, Cert: t.CertFile, Key: t.KeyFile}.TLSConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd client: %w", err)
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return cli, nil
}
