package experiment

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
)

// debianMember is one etcd process of Debian's etcd-server package.
type debianMember struct {
	name, client string
	cmd          *exec.Cmd
	bin          string
	args         []string
	log          *os.File
}

// startDebianCluster starts 3 members of the system's etcd (Debian's
// 3.4, which .ci/run installs) with its default ticks (100 ms heartbeat,
// 1 s election timeout: a minimum TTL of 2 s), on loopback.
func startDebianCluster(t *testing.T) []*debianMember {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no etcd binary on PATH: .ci/run installs Debian's etcd-server for this test")
		}
		t.Skip("no etcd binary on PATH (apt-get install etcd-server to run this test)")
	}
	dir := t.TempDir()
	var ms []*debianMember
	var initial []string
	peers := map[string]string{}
	for i := range 3 {
		m := &debianMember{name: fmt.Sprintf("d%d", i+1), client: loopbackAddr(t)}
		peers[m.name] = loopbackAddr(t)
		initial = append(initial, m.name+"=http://"+peers[m.name])
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.bin = bin
		m.args = []string{"--name", m.name, "--data-dir", filepath.Join(dir, m.name),
			"--listen-client-urls", "http://" + m.client, "--advertise-client-urls", "http://" + m.client,
			"--listen-peer-urls", "http://" + peers[m.name], "--initial-advertise-peer-urls", "http://" + peers[m.name],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "experiment-test"}
		logf, err := os.Create(filepath.Join(dir, m.name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		m.log = logf
		m.start(t)
		t.Cleanup(func() { m.kill(); logf.Close() })
	}
	return ms
}

// start runs the member (again, on its data dir, after a kill).
func (m *debianMember) start(t *testing.T) {
	t.Helper()
	m.cmd = exec.Command(m.bin, m.args...)
	m.cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+goArch())
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

func (m *debianMember) kill() {
	if m.cmd.Process != nil && m.cmd.ProcessState == nil {
		m.cmd.Process.Kill()
		m.cmd.Wait()
	}
}

func loopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func goArch() string {
	out, _ := exec.Command("go", "env", "GOARCH").Output()
	return strings.TrimSpace(string(out))
}

func endpointsOf(ms []*debianMember) []string {
	var out []string
	for _, m := range ms {
		out = append(out, "http://"+m.client)
	}
	return out
}

// debianRemote waits until the cluster has a leader and connects to it as
// a shared cluster would be, under a learner's prefix.
func debianRemote(t *testing.T, ms []*debianMember) *embedetcd.Remote {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := access.Settings{Endpoints: endpointsOf(ms)}
	for ctx.Err() == nil {
		cli, err := s.New(zap.NewNop())
		if err == nil {
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			_, err = cli.Put(pctx, "ready", "1")
			pcancel()
			cli.Close()
			if err == nil {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	r, err := embedetcd.Connect(ctx, s, "/playground/tester/")
	if err != nil {
		t.Fatalf("connect to Debian's etcd: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// followerOf is a running member that does not lead.
func followerOf(t *testing.T, ms []*debianMember) *debianMember {
	t.Helper()
	lead := leaderOf(t, ms)
	for _, m := range ms {
		if m != lead && m.cmd.ProcessState == nil {
			return m
		}
	}
	t.Fatal("no follower running")
	return nil
}

// leaderOf is the running member raft has as its leader.
func leaderOf(t *testing.T, ms []*debianMember) *debianMember {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpointsOf(ms), Logger: zap.NewNop(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, m := range ms {
		if m.cmd.ProcessState != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := cli.Status(ctx, "http://"+m.client)
		cancel()
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no member says it leads")
	return nil
}

// TestOnDebianEtcd34 runs every scenario a shared cluster allows on
// Debian's etcd 3.4, 3 members with default ticks: the run reads the
// cluster's timing (it grants no TTL under 2 s) and scales to it, and
// each shows its effect. Then renewal runs again while a member is
// killed 2 s in, a follower and then the leader: the requests that meet
// "leader changed" or a closed connection are sent again, and the run
// is not aborted.
func TestOnDebianEtcd34(t *testing.T) {
	t.Parallel() // mostly waiting: beside the other slow one, after the rest
	ms := startDebianCluster(t)
	remote := debianRemote(t, ms)
	for _, sc := range Scenarios() {
		if sc.SharedCluster(remote.Access()) != nil {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			run, err := Start(context.Background(), sc.Name, Params{}, Env{Etcd: remote}, nil)
			if err != nil {
				t.Fatal(err)
			}
			v, err := run.Wait()
			h := run.History()
			if err != nil || !v.Showed {
				t.Errorf("on etcd 3.4 (%+v): %v: %s", h.Timing, err, v.Summary)
			}
			if h.Timing.MinTTL != 2 || h.Params.TTL < 2 {
				t.Errorf("timing %+v, TTL used %d: want etcd's minimum of 2 s read and used", h.Timing, h.Params.TTL)
			}
			checkTextsAgree(t, h.Events)
		})
	}
	// A follower killed 2 s in, into the first schedule's renewals: the
	// replicas' requests to it fail over to the others, and the run
	// still shows its effect.
	t.Run("renewal with a follower killed", func(t *testing.T) {
		run, err := Start(context.Background(), "renewal", Params{}, Env{Etcd: remote}, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		f := followerOf(t, ms)
		f.kill()
		v, err := run.Wait()
		if err != nil || !v.Showed {
			t.Errorf("with the follower %s killed 2 s in: %v: %s", f.name, err, v.Summary)
		}
		f.start(t) // three members again for the next one
		debianRemote(t, ms)
	})
	// The leader killed 2 s in: a raft election under way ("leader
	// changed", "no leader") is retried, not an abort; what the renewals
	// met is the verdict's to say.
	t.Run("renewal with the leader killed", func(t *testing.T) {
		run, err := Start(context.Background(), "renewal", Params{}, Env{Etcd: remote}, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		lead := leaderOf(t, ms)
		lead.kill()
		v, err := run.Wait()
		if err != nil {
			t.Errorf("with the leader %s killed 2 s in the run failed: %v", lead.name, err)
		}
		t.Logf("leader %s killed: %s", lead.name, v.Summary)
	})
}
