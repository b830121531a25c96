package embedetcd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/internal/faultproxy"
)

// Cluster is an in-process etcd cluster whose members can be stopped,
// restarted and made raft leader, to show quorum loss and leader changes.
type Cluster struct {
	cfg     *config
	lg      *zap.Logger
	members []*Member

	mu      sync.Mutex
	clients []*clientv3.Client
	closed  bool
}

// Member is one member of a Cluster. Clients reach it through a proxy on a
// fixed loopback port, so its endpoint stays valid across restarts, and
// stopping it can cut every client connection at once, the way a crash
// does (otherwise etcd's graceful stop waits seconds for open watch and
// keepalive streams).
type Member struct {
	Name    string
	cluster *Cluster
	peer    url.URL
	client  url.URL // where etcd listens
	proxy   *faultproxy.Proxy
	dir     *dataDir
	initial string

	mu sync.Mutex
	e  *embed.Etcd
}

// StartCluster starts n members on loopback and returns once all are ready.
// It uses ClusterTicks unless WithTicks says otherwise.
func StartCluster(ctx context.Context, n int, opts ...Option) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("start etcd cluster: need at least 1 member, got %d", n)
	}
	c := newConfig(opts)
	if c.ticks == nil {
		c.ticks = &ClusterTicks
	}
	// Members' ports are picked free before etcd binds them (the peer URLs
	// must be known to every member up front), so another process can take
	// one in between; then the whole cluster starts again on new ports.
	for attempt := 1; ; attempt++ {
		cl, err := startCluster(ctx, c, n)
		if err == nil || attempt == 3 || !portTaken(err) || ctx.Err() != nil {
			return cl, err
		}
	}
}

func startCluster(ctx context.Context, c *config, n int) (*Cluster, error) {
	cl := &Cluster{cfg: c, lg: c.zapLogger()}
	if err := prepareParent(dataParent(c), n); err != nil {
		return nil, fmt.Errorf("start etcd cluster: %w", err)
	}
	var initial []string
	used := map[string]bool{}
	for i := range n {
		m, err := cl.newMember(i, used)
		if err != nil {
			cl.Close()
			return nil, fmt.Errorf("start etcd cluster: %w", err)
		}
		cl.members = append(cl.members, m)
		initial = append(initial, m.Name+"="+m.peer.String())
	}
	// Launch members one after another: a new member asks its peers whether
	// it is already bootstrapped, and a peer whose port is bound but not yet
	// served makes that question wait a full second. Launched in order, each
	// peer either refuses at once or already answers. Then wait in parallel.
	deadline := time.Now().Add(c.startTimeout)
	for _, m := range cl.members {
		m.initial = strings.Join(initial, ",")
		if err := m.launch(ctx, deadline); err != nil {
			cl.Close()
			return nil, fmt.Errorf("start etcd cluster (log: %s): %w", c.logPath(), err)
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range cl.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := waitReady(ctx, m.server(), deadline); err != nil {
				errs[i] = fmt.Errorf("member %s: %w", m.Name, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		cl.Close()
		return nil, fmt.Errorf("start etcd cluster (log: %s): %w", c.logPath(), err)
	}
	return cl, nil
}

// freeAddr picks a free loopback port that is not in used, and adds it.
// A member's ports must still be free when a stopped member restarts, so
// they are taken below the kernel's ephemeral range: a port from that
// range can go, while the member is down, to any new outgoing connection
// or port-0 listener, and the restart then fails with "address already in
// use". A port closed again can also be handed out again at once, and two
// members on one port make the initial cluster invalid ("has duplicate
// url"), hence used.
func freeAddr(used map[string]bool) (string, error) { return MemberAddr(used) }

// MemberAddr picks a loopback address for an etcd member, as the
// in-process cluster does for its own (see freeAddr), for tests that run
// members of an etcd binary they stop and restart. used holds the
// addresses already picked, and gets the new one.
func MemberAddr(used map[string]bool) (string, error) {
	lo, hi := belowEphemeral()
	for range 200 {
		addr := fmt.Sprintf("127.0.0.1:%d", lo+rand.IntN(hi-lo))
		if used[addr] {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		used[addr] = true
		return addr, nil
	}
	return "", fmt.Errorf("no free loopback port between %d and %d", lo, hi)
}

// belowEphemeral is the range of ports freeAddr picks from: from 10000 up
// to the start of the ephemeral range (Linux's ip_local_port_range,
// 32768 by default), or 10000-32767 where the range cannot be read.
func belowEphemeral() (lo, hi int) {
	lo, hi = 10000, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if start, err := strconv.Atoi(f[0]); err == nil && start > lo+1000 {
			hi = start
		}
	}
	return lo, hi
}

func (cl *Cluster) newMember(i int, used map[string]bool) (*Member, error) {
	peer, err := freeAddr(used)
	if err != nil {
		return nil, err
	}
	client, err := freeAddr(used)
	if err != nil {
		return nil, err
	}
	dir, err := newDataDir(dataParent(cl.cfg))
	if err != nil {
		return nil, err
	}
	px, err := faultproxy.New(client)
	if err != nil {
		dir.remove()
		return nil, err
	}
	return &Member{
		Name:    fmt.Sprintf("m%d", i+1),
		cluster: cl,
		peer:    url.URL{Scheme: "http", Host: peer},
		client:  url.URL{Scheme: cl.cfg.clientScheme(), Host: client},
		proxy:   px,
		dir:     dir,
	}, nil
}

func (m *Member) launch(ctx context.Context, deadline time.Time) error {
	s := &Server{cfg: m.cluster.cfg, lg: m.cluster.lg, name: m.Name}
	ec, err := s.embedConfig(m.dir.path, m.peer, m.client)
	if err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	ec.InitialCluster = m.initial
	ec.InitialClusterToken = "playground"
	e, err := launchEmbed(ctx, ec, deadline)
	if err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	m.mu.Lock()
	m.e = e
	m.mu.Unlock()
	return nil
}

// Endpoint is the member's client URL (stable across restarts).
func (m *Member) Endpoint() string { return m.cluster.cfg.clientScheme() + "://" + m.proxy.Addr() }

// Running reports whether the member is started.
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.e != nil
}

// Stop stops the member as a crash would: client connections are cut and
// the server shut down. Its data is kept for Restart.
func (m *Member) Stop() error {
	m.mu.Lock()
	e := m.e
	m.e = nil
	m.mu.Unlock()
	if e == nil {
		return fmt.Errorf("stop member %s: not running", m.Name)
	}
	m.proxy.Cut()
	e.Close()
	return nil
}

// Restart starts a stopped member again from its data directory and waits
// until it has rejoined (which needs a quorum of running members).
func (m *Member) Restart(ctx context.Context) error {
	if m.Running() {
		return fmt.Errorf("restart member %s: already running", m.Name)
	}
	deadline := time.Now().Add(m.cluster.cfg.startTimeout)
	if err := m.launch(ctx, deadline); err != nil {
		return err
	}
	if err := waitReady(ctx, m.server(), deadline); err != nil {
		m.mu.Lock()
		m.e = nil
		m.mu.Unlock()
		return fmt.Errorf("restart member %s: %w", m.Name, err)
	}
	return nil
}

func (m *Member) server() *embed.Etcd {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.e
}

// Members returns the members in order (m1, m2, ...).
func (cl *Cluster) Members() []*Member { return cl.members }

// Endpoints returns every member's client URL.
func (cl *Cluster) Endpoints() []string {
	out := make([]string, len(cl.members))
	for i, m := range cl.members {
		out[i] = m.Endpoint()
	}
	return out
}

// Client returns a client for all members, closed by Close.
func (cl *Cluster) Client() (*clientv3.Client, error) { return cl.ClientFor(cl.Endpoints()...) }

// ClientFor returns a client for the given endpoints, closed by Close.
func (cl *Cluster) ClientFor(endpoints ...string) (*clientv3.Client, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.closed {
		return nil, errors.New("etcd client: cluster closed")
	}
	cli, err := newClient(endpoints, cl.cfg, cl.lg)
	if err != nil {
		return nil, err
	}
	cl.clients = append(cl.clients, cli)
	return cli, nil
}

// Leader returns the index of the member that is raft leader, as seen by a
// running member, or an error when no running member knows a leader.
func (cl *Cluster) Leader() (int, error) {
	for _, m := range cl.members {
		e := m.server()
		if e == nil {
			continue
		}
		lead := uint64(e.Server.Leader())
		if lead == 0 {
			continue
		}
		for j, o := range cl.members {
			if oe := o.server(); oe != nil && uint64(oe.Server.MemberID()) == lead {
				return j, nil
			}
		}
	}
	return -1, errors.New("etcd cluster: no leader")
}

// MoveLeader transfers raft leadership to member index to and waits for
// the transfer to finish.
func (cl *Cluster) MoveLeader(ctx context.Context, to int) error {
	if to < 0 || to >= len(cl.members) {
		return fmt.Errorf("move leader: no member %d", to)
	}
	from, err := cl.Leader()
	if err != nil {
		return fmt.Errorf("move leader: %w", err)
	}
	if from == to {
		return nil
	}
	le, te := cl.members[from].server(), cl.members[to].server()
	if le == nil || te == nil {
		return errors.New("move leader: member not running")
	}
	if err := le.Server.MoveLeader(ctx, uint64(le.Server.MemberID()), uint64(te.Server.MemberID())); err != nil {
		return fmt.Errorf("move leader to %s: %w", cl.members[to].Name, err)
	}
	return nil
}

// CutLink drops every raft message between members i and j, both ways,
// as a failed link between two machines would, while each still reaches
// the others and its clients. It uses etcd's own peer transport
// (rafthttp's CutPeer), because a proxy in front of a member's peer port
// could not do it: a member receives its peers' messages over
// connections it dials itself. MendLink ends it.
func (cl *Cluster) CutLink(i, j int) error { return cl.link(i, j, true) }

// MendLink lets messages between members i and j through again.
func (cl *Cluster) MendLink(i, j int) error { return cl.link(i, j, false) }

func (cl *Cluster) link(i, j int, cut bool) error {
	if i < 0 || j < 0 || i >= len(cl.members) || j >= len(cl.members) || i == j {
		return fmt.Errorf("link %d-%d: no such pair of members", i, j)
	}
	a, b := cl.members[i].server(), cl.members[j].server()
	if a == nil || b == nil {
		return fmt.Errorf("link %s-%s: member not running", cl.members[i].Name, cl.members[j].Name)
	}
	if cut {
		a.Server.CutPeer(b.Server.MemberID())
		b.Server.CutPeer(a.Server.MemberID())
	} else {
		a.Server.MendPeer(b.Server.MemberID())
		b.Server.MendPeer(a.Server.MemberID())
	}
	return nil
}

// Close stops every member and removes their data.
// clusterCloseWait bounds the listeners' shutdown in Cluster.Close, after
// every member's raft and storage have stopped.
const clusterCloseWait = 100 * time.Millisecond

func (cl *Cluster) Close() error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.closed = true
	clients := cl.clients
	cl.clients = nil
	cl.mu.Unlock()
	closeClients(clients)
	var wg sync.WaitGroup
	var errs []error
	var emu sync.Mutex
	for _, m := range cl.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.proxy.Close()
			if e := m.server(); e != nil {
				// The whole cluster goes: stop raft and storage at once,
				// without handing leadership to a peer that is stopping
				// too. What is left is closing listeners, whose graceful
				// stop waits up to a second for the peers' streams; the
				// caller need not wait for that, but the data dir stays
				// until etcd has let go of it (removing it under a
				// running member makes etcd exit the process).
				e.Server.HardStop()
				if stopped, ok := stopEmbed(e, min(cl.cfg.closeWait, clusterCloseWait)); !ok {
					go func() { <-stopped; m.dir.remove() }()
					return
				}
			}
			if err := m.dir.remove(); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// portTaken reports a bind that failed because the port was in use.
func portTaken(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}
