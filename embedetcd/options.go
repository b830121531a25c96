// Package embedetcd runs a real etcd inside the playground process: one
// quiet member on loopback, or an in-process cluster whose members can be
// stopped, restarted and made raft leader.
package embedetcd

import (
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/ownership-election/playground/internal/statedir"
)

// Ticks are the raft heartbeat and election timeouts. They also set etcd's
// minimum lease TTL: ceil(floor(3*election/tick/2) * tick), rounded up to
// whole seconds.
type Ticks struct {
	TickMs     uint
	ElectionMs uint
}

var (
	// FastTicks (10 ms / 100 ms) start a single member in ~60 ms and allow
	// 1 s leases. The default for Start.
	FastTicks = Ticks{TickMs: 10, ElectionMs: 100}
	// ClusterTicks (50 ms / 500 ms) still allow 1 s leases but leave a
	// multi-member cluster enough slack not to hold spurious elections on a
	// loaded 2-core machine. The default for StartCluster.
	ClusterTicks = Ticks{TickMs: 50, ElectionMs: 500}
	// IdleTicks (100 ms / 500 ms) still allow 1 s leases and use a quarter
	// of FastTicks' CPU while nothing happens (0.3% of a core against
	// 1.2%), at the price of a start of about 0.4 s. For a member that
	// runs for a long time and mostly waits: the terminal interface's and
	// `playground etcd`'s.
	IdleTicks = Ticks{TickMs: 100, ElectionMs: 500}
	// DefaultTicks are etcd's own defaults (100 ms / 1 s, 2 s minimum TTL).
	DefaultTicks = Ticks{TickMs: 100, ElectionMs: 1000}
)

// WithQuota sets the backend quota (etcd's --quota-backend-bytes): past
// it the member raises NOSPACE and refuses writes until it is compacted,
// defragmented and the alarm disarmed.
func WithQuota(bytes int64) Option { return func(c *config) { c.quota = bytes } }

// WithMaxRequestBytes sets the largest request a member takes (etcd's
// --max-request-bytes; its default is 1.5 MiB): a put of a larger value
// is refused with "request is too large".
func WithMaxRequestBytes(n uint) Option { return func(c *config) { c.maxRequest = n } }

// WithAutoCompaction makes the member compact its history periodically,
// keeping retention of it (etcd's --auto-compaction-mode=periodic
// --auto-compaction-retention), so old revisions do not fill the quota.
func WithAutoCompaction(retention time.Duration) Option {
	return func(c *config) { c.compaction = retention }
}

// Option configures Start and StartCluster.
type Option func(*config)

type config struct {
	ticks        *Ticks
	dataDir      string // parent directory for member data dirs
	logFile      string // "" means the state dir's etcd.log
	logger       *zap.Logger
	host         string
	port         int
	startTimeout time.Duration
	closeWait    time.Duration
	tls          *ServerTLS
	quota        int64         // backend quota in bytes; 0 is etcd's default (2 GiB)
	maxRequest   uint          // largest request in bytes; 0 is etcd's default (1.5 MiB)
	compaction   time.Duration // periodic auto-compaction retention; 0 is none
	preVote      *bool         // raft Pre-Vote; nil is etcd's default (on)
	// leaseCheckpoints turns on the LeaseCheckpoint feature gates.
	leaseCheckpoints bool
}

func newConfig(opts []Option) *config {
	c := &config{
		host:         "127.0.0.1",
		startTimeout: 10 * time.Second,
		closeWait:    time.Second,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithPreVote turns raft's Pre-Vote on or off (etcd's --pre-vote, on by
// default since v3.5): with it, a member that lost its leader first asks
// whether it could win before it raises its term, so a member cut off
// from the leader cannot depose it when the link comes back.
func WithPreVote(on bool) Option { return func(c *config) { c.preVote = &on } }

// WithLeaseCheckpoints turns on etcd's alpha lease checkpointing (the
// LeaseCheckpoint and LeaseCheckpointPersist feature gates, off by
// default): the leader then records a lease's remaining TTL in raft, so a
// new leader keeps it, but only for leases with more left than the
// checkpoint interval (5 minutes). The facts tests use it to show that an
// election-sized lease gets its full TTL back either way.
func WithLeaseCheckpoints() Option { return func(c *config) { c.leaseCheckpoints = true } }

// WithTicks sets the raft tick and election timeouts.
func WithTicks(t Ticks) Option { return func(c *config) { c.ticks = &t } }

// WithDataDir makes members keep their data under dir (one sub-directory
// each, removed on Close) instead of the system temp directory.
func WithDataDir(dir string) Option { return func(c *config) { c.dataDir = dir } }

// WithLogFile sends server and client logs to path (appended) instead of
// etcd.log in the playground's state directory.
func WithLogFile(path string) Option { return func(c *config) { c.logFile = path } }

// WithLogger sends server and client logs to lg; it wins over WithLogFile.
func WithLogger(lg *zap.Logger) Option { return func(c *config) { c.logger = lg } }

// WithListen sets the client listen address of a single member. The host
// defaults to 127.0.0.1 and the port to 0 (an ephemeral port). Listening
// beyond loopback only happens when a caller passes another host here.
func WithListen(host string, port int) Option {
	return func(c *config) {
		if host != "" {
			c.host = host
		}
		c.port = port
	}
}

// ServerTLS names the PEM files members serve clients with over TLS.
type ServerTLS struct {
	CertFile string // the member's certificate (must name 127.0.0.1)
	KeyFile  string
	// CAFile is the CA that signed CertFile. Clients from Client trust it;
	// with ClientCertAuth the member also requires client certificates
	// signed by it.
	CAFile         string
	ClientCertAuth bool
}

// WithClientTLS makes members serve clients over TLS (https:// endpoints),
// as a class cluster does; peers still talk plain HTTP on loopback.
func WithClientTLS(t ServerTLS) Option { return func(c *config) { c.tls = &t } }

func (c *config) clientScheme() string {
	if c.tls != nil {
		return "https"
	}
	return "http"
}

// WithStartTimeout bounds how long Start waits for the member to be ready.
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// WithCloseWait bounds how long Close waits for connections that the
// package did not hand out (etcdctl, the learner's own programs) to finish;
// after that the server is abandoned to stop in the background.
func WithCloseWait(d time.Duration) Option { return func(c *config) { c.closeWait = d } }

func (c *config) logPath() string {
	if c.logFile != "" {
		return c.logFile
	}
	dir, err := statedir.Dir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "etcd.log")
}
