package scenario

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/pki"
)

// debianEtcd is Debian's etcd-server package (3.4), which .ci/run
// installs: an etcd we did not build.
const debianEtcd = "/usr/bin/etcd"

// debianMember is one etcd process of Debian's etcd-server package.
type debianMember struct {
	name, client string
	cmd          *exec.Cmd
	exited       chan struct{} // closed when the process has ended
	args         []string
	log          *os.File
}

// debianCluster is 3 members of Debian's etcd serving clients and peers
// over TLS with authentication on, set up the way docs/class.md and
// class mode do: certificates from internal/pki, root, and a learner
// whose role covers only its prefix.
type debianCluster struct {
	members []*debianMember
	root    access.Settings // the instructor
	learner access.Settings // the learner the experiments run as
	prefix  string          // the learner's prefix
}

// debianLearner is the learner's name on the test's class cluster.
const debianLearner = "tester"

// startDebianCluster starts the cluster with etcd's default ticks
// (100 ms heartbeat, 1 s election timeout: a minimum TTL of 2 s), on
// loopback, turns auth on and sets up the learner.
func startDebianCluster(t *testing.T) *debianCluster {
	t.Helper()
	if _, err := os.Stat(debianEtcd); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no %s: .ci/run installs Debian's etcd-server for this test", debianEtcd)
		}
		t.Skipf("no %s, Debian's etcd 3.4 (apt-get install etcd-server to run this test)", debianEtcd)
	}
	dir := t.TempDir()
	data := memoryDir(t)
	tlsArgs, caFile := debianTLS(t, dir)
	var ms []*debianMember
	var initial []string
	peers := map[string]string{}
	used := map[string]bool{}
	for i := range 3 {
		m := &debianMember{name: fmt.Sprintf("d%d", i+1), client: loopbackAddr(t, used)}
		peers[m.name] = loopbackAddr(t, used)
		initial = append(initial, m.name+"=https://"+peers[m.name])
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.args = append([]string{"--name", m.name, "--data-dir", filepath.Join(data, m.name),
			"--listen-client-urls", "https://" + m.client, "--advertise-client-urls", "https://" + m.client,
			"--listen-peer-urls", "https://" + peers[m.name], "--initial-advertise-peer-urls", "https://" + peers[m.name],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "experiment-test"}, tlsArgs...)
		logf, err := os.Create(filepath.Join(dir, m.name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		m.log = logf
		m.start(t)
		t.Cleanup(func() { m.kill(); logf.Close() })
	}
	c := &debianCluster{members: ms, prefix: class.Prefix(debianLearner)}
	c.root = access.Settings{Endpoints: c.endpoints(), CACert: caFile}
	c.setUpClass(t)
	return c
}

// memoryDir is a directory in memory (/dev/shm) for the members' data,
// removed at the end, or a temporary one where there is none. etcd 3.4
// has no --unsafe-no-fsync, and on a disk other work shares its WAL's
// fsyncs stalled for seconds (renewals waited behind them while the
// lease ran out), as the embedded etcd avoids with UnsafeNoFsync.
func memoryDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "playground-debian-etcd-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// debianTLS writes a CA and the members' certificate into dir and
// returns the flags that serve clients and peers with them, as
// docs/class.md starts a class's members.
func debianTLS(t *testing.T, dir string) ([]string, string) {
	t.Helper()
	ca, err := pki.NewCA("experiment test CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile, err := ca.WriteCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Server("etcd", []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := pair.Write(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	// Every client that logs in with a password costs the member a
	// bcrypt comparison: at etcd's default cost (10) the forty logins of
	// a lock-waiters run kept the members' CPU busy for seconds on
	// this 2-core machine, beside the race-built test, and raft missed
	// its heartbeats. A class cluster has machines of its own; here the
	// cheapest cost keeps the logins (and auth) without that load.
	return []string{"--cert-file", cert, "--key-file", key,
		"--peer-cert-file", cert, "--peer-key-file", key, "--peer-trusted-ca-file", caFile, "--peer-client-cert-auth",
		"--bcrypt-cost", "4"}, caFile
}

// setUpClass turns authentication on with class mode's own code (root
// and its role) and sets the learner up as `class setup` does.
func (c *debianCluster) setUpClass(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	plain := c.root
	cli := c.waitLeader(t, ctx, plain)
	password := class.GeneratePassword()
	err := class.EnableAuth(ctx, cli, password)
	cli.Close()
	if err != nil {
		t.Fatal(err)
	}
	c.root.User, c.root.Password = "root", password
	root, err := c.root.New(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	actions, err := class.Setup(ctx, c.root, root, []class.Learner{{Name: debianLearner}}, nil)
	if err != nil {
		t.Fatalf("class setup on Debian's etcd: %v", err)
	}
	c.learner = plain
	c.learner.User, c.learner.Password = debianLearner, actions[0].Password
}

// start runs the member (again, on its data dir, after a kill).
func (m *debianMember) start(t *testing.T) {
	t.Helper()
	m.cmd = exec.Command(debianEtcd, m.args...)
	m.cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+goArch())
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	m.exited = exited
	go func() { m.cmd.Wait(); close(exited) }()
}

// running reports whether the member's process is still there.
func (m *debianMember) running() bool {
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

func (m *debianMember) kill() {
	if m.running() {
		m.cmd.Process.Kill()
		<-m.exited
	}
}

// restart starts the member again and waits until it answers: a member
// that cannot (its ports were taken meanwhile) fails the test here, not
// the next one that needs three members.
func (c *debianCluster) restart(t *testing.T, m *debianMember) {
	t.Helper()
	m.start(t)
	cli, err := c.root.New(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for m.running() && ctx.Err() == nil {
		sctx, scancel := context.WithTimeout(ctx, time.Second)
		_, err = cli.Status(sctx, "https://"+m.client)
		scancel()
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, _ := os.ReadFile(m.log.Name())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Fatalf("member %s did not come back (running %v): %v; its log ends:\n%s", m.name, m.running(), err, strings.Join(lines[max(0, len(lines)-10):], "\n"))
}

// loopbackAddr is a member address that stays free while the member is
// down (below the ephemeral range), distinct from those in used.
func loopbackAddr(t *testing.T, used map[string]bool) string {
	t.Helper()
	addr, err := embedetcd.MemberAddr(used)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func goArch() string {
	out, _ := exec.Command("go", "env", "GOARCH").Output()
	return strings.TrimSpace(string(out))
}

func (c *debianCluster) endpoints() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, "https://"+m.client)
	}
	return out
}

// waitLeader waits until the cluster commits a write made with s and
// returns the client that made it.
func (c *debianCluster) waitLeader(t *testing.T, ctx context.Context, s access.Settings) *clientv3.Client {
	t.Helper()
	var err error
	for ctx.Err() == nil {
		var cli *clientv3.Client
		if cli, err = s.New(zap.NewNop()); err == nil {
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			_, err = cli.Put(pctx, "ready", "1")
			pcancel()
			if err == nil {
				return cli
			}
			cli.Close()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("Debian's etcd never took a write: %v", err)
	return nil
}

// remote waits until the cluster has a leader again and connects to it
// as the learner, under the learner's prefix, as a class's playground
// does.
func (c *debianCluster) remote(t *testing.T) *embedetcd.Remote {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.waitLeader(t, ctx, c.root).Close()
	r, err := embedetcd.Connect(ctx, c.learner, c.prefix)
	if err != nil {
		t.Fatalf("connect to Debian's etcd as %s: %v", debianLearner, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// followerOf is a running member that does not lead.
func (c *debianCluster) followerOf(t *testing.T) *debianMember {
	t.Helper()
	lead := c.leaderOf(t)
	for _, m := range c.members {
		if m != lead && m.running() {
			return m
		}
	}
	t.Fatal("no follower running")
	return nil
}

// leaderOf is the running member raft has as its leader.
func (c *debianCluster) leaderOf(t *testing.T) *debianMember {
	t.Helper()
	cli, err := c.root.New(zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, m := range c.members {
		if !m.running() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := cli.Status(ctx, "https://"+m.client)
		cancel()
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no member says it leads")
	return nil
}

// TestOnDebianEtcd34 runs every scenario a shared cluster allows on
// Debian's etcd 3.4, 3 members with default ticks, TLS and auth, as the
// learner of a class under its prefix: each run reads the cluster's
// timing (it grants no TTL under 2 s), scales to it and shows its
// effect. Then members are killed mid-run, and the runs still show
// their effect: renewal with a follower killed and with the leader
// killed after the first renewal (the next one meets the election), and
// ttl-unlock-bug with the leader killed as P1 sends its lock
// transaction (an answer lost there is checked by a read, not an abort).
func TestOnDebianEtcd34(t *testing.T) {
	t.Parallel() // mostly waiting: beside the other slow one, after the rest
	c := startDebianCluster(t)
	remote := c.remote(t)
	t.Run("scenarios", func(t *testing.T) {
		for lane, names := range debianLanes(remote) {
			t.Run(lane, func(t *testing.T) {
				t.Parallel()
				for _, name := range names {
					t.Run(name, func(t *testing.T) {
						var run *experiment.Run
						var err error
						worst, made := untilSteady(func() { // stall_test.go
							if run, err = Start(context.Background(), name, history.Params{}, experiment.Env{Etcd: remote}, nil); err == nil {
								run.Wait()
							}
						})
						t.Logf("run %d time(s); the judged run's worst stall: %s", made, worst.Round(time.Millisecond))
						if err != nil {
							t.Fatal(err)
						}
						checkDebianRun(t, run, "no fault")
					})
				}
			})
		}
	})
	t.Run("renewal with a follower killed", func(t *testing.T) {
		c.killDuring(t, remote, "renewal", firstRenewal, c.followerOf)
	})
	t.Run("renewal with the leader killed", func(t *testing.T) {
		c.killDuring(t, remote, "renewal", firstRenewal, c.leaderOf)
	})
	t.Run("ttl-unlock-bug with the leader killed", func(t *testing.T) {
		c.killDuring(t, remote, "ttl-unlock-bug", func(e history.Event) bool {
			return e.Kind == history.LeaseGranted && e.Replica == "p1"
		}, c.leaderOf)
	})
}

// debianLanes splits the scenarios a shared cluster allows into two
// lanes that run side by side, one after the other within each: those
// whose verdict rests on how long etcd takes to expire a lease, and the
// rest (their waits are mostly for each other, so two at once take about
// half the time).
func debianLanes(remote *embedetcd.Remote) map[string][]string {
	timed := []string{failoverTimingScenario.Name, renewalScenario.Name}
	lanes := map[string][]string{"lease timing": timed}
	for _, sc := range Scenarios() {
		if sc.SharedCluster(remote.Access()) == nil && !slices.Contains(timed, sc.Name) {
			lanes["others"] = append(lanes["others"], sc.Name)
		}
	}
	return lanes
}

// firstRenewal is the first answered renewal of a run: in renewal, of
// its TTL/2 schedule, whose next renewal is then due half a TTL later,
// while etcd is still electing a leader if the leader was killed.
func firstRenewal(e history.Event) bool { return e.Kind == history.LeaseRenewed }

// killDuring runs the scenario as the learner and kills the member that
// pick names at the first event at, then checks that the run showed its
// effect, and starts the member again for the next test.
func (c *debianCluster) killDuring(t *testing.T, remote *embedetcd.Remote, name string, at func(history.Event) bool, pick func(*testing.T) *debianMember) {
	t.Helper()
	victim := pick(t)
	seen := make(chan struct{})
	var once bool
	sink := func(e history.Event) { // called one event at a time
		if !once && at(e) {
			once = true
			close(seen)
		}
	}
	run, err := Start(context.Background(), name, history.Params{}, experiment.Env{Etcd: remote}, sink)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
		victim.kill()
		run.Emit(history.Event{Kind: history.MemberStopped, Replica: victim.name, Text: "etcd member " + victim.name + " killed, from outside the run"})
	case <-run.Done():
		t.Fatal("the run ended before the moment to kill a member")
	}
	checkDebianRun(t, run, "member "+victim.name+" killed")
	c.restart(t, victim)
}

// checkDebianRun waits for the run and checks that it showed its effect
// on etcd's minimum TTL and that its texts agree with etcd's answers.
func checkDebianRun(t *testing.T, run *experiment.Run, fault string) {
	t.Helper()
	v, err := run.Wait()
	h := run.History()
	if err != nil || !v.Showed {
		t.Errorf("on etcd 3.4 with %s (%+v): %v: %s", fault, h.Timing, err, v.Sentence())
	}
	if h.Timing.MinTTL != 2 || h.Params.TTL < 2 {
		t.Errorf("timing %+v, TTL used %d: want etcd's minimum of 2 s read and used", h.Timing, h.Params.TTL)
	}
	checkTextsAgree(t, h.Events)
	if fault != "no fault" {
		t.Logf("with %s: %s\n%s", fault, v.Sentence(), whatTheFaultCost(h.Events))
	}
	if t.Failed() {
		for _, e := range h.Events {
			t.Log(e)
		}
	}
}

// whatTheFaultCost counts, for the test's log, the requests a run sent
// more than once and the lost answers it checked by a read.
func whatTheFaultCost(events []history.Event) string {
	retried, late, checked, applied := 0, 0, 0, 0
	for _, e := range events {
		if f := e.Facts; f != nil && e.Kind != history.KeyChanged {
			if f.Tries > 1 {
				retried++
			}
			if f.Overdue > 0 {
				late++
			}
			for _, r := range f.Resolved {
				checked++
				if r.Applied {
					applied++
				}
			}
		}
	}
	return fmt.Sprintf("requests answered on a later try: %d; renewals answered after the replica's own deadline: %d; lost answers checked by a read: %d (%d had applied)", retried, late, checked, applied)
}
