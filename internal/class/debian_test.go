package class_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
	"github.com/ownership-election/playground/internal/pki"
	"github.com/ownership-election/playground/internal/progress"
)

// systemEtcd finds an etcd server that is not ours: Debian's etcd-server
// package (3.4), which CI installs. On a developer's machine without it
// the test says so and skips; in CI its absence is a failure.
func systemEtcd(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no etcd binary on PATH: .ci/run installs Debian's etcd-server for this test")
		}
		t.Skip("no etcd binary on PATH (apt-get install etcd-server to run this test)")
	}
	return path
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestClassOnDebianEtcd runs the class setup and a learner's session
// against an etcd binary we did not build, with TLS and auth, the way an
// instructor would run one from their distribution's package.
func TestClassOnDebianEtcd(t *testing.T) {
	bin := systemEtcd(t)
	dir := t.TempDir()
	ca, err := pki.NewCA("debian test CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile, _ := ca.WriteCert(dir)
	pair, err := ca.Server("etcd", []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := pair.Write(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	client, peer := freePort(t), freePort(t)
	cmd := exec.Command(bin,
		"--name", "class1", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", "https://"+client, "--advertise-client-urls", "https://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "class1=http://"+peer,
		"--cert-file", certFile, "--key-file", keyFile)
	cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+goarch())
	logf, _ := os.Create(filepath.Join(dir, "etcd.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
	})
	plain := access.Settings{Endpoints: []string{"https://" + client}, CACert: caFile}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	waitReady(t, ctx, plain, filepath.Join(dir, "etcd.log"))
	if err := classtest.EnableAuth(ctx, plain); err != nil {
		t.Fatal(err)
	}
	rootS := plain
	rootS.User, rootS.Password = "root", classtest.RootPassword
	root, err := rootS.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := class.CheckServer(ctx, rootS, root, false); !errors.Is(err, class.ErrOldEtcd) || !strings.Contains(err.Error(), "--allow-etcd-3.4") {
		t.Errorf("class setup's check on etcd 3.4: %v, want a refusal that names --allow-etcd-3.4", err)
	}
	srv, err := class.CheckServer(ctx, rootS, root, true)
	if err != nil {
		t.Fatalf("the check with --allow-etcd-3.4: %v", err)
	}
	if w := strings.Join(srv.Warnings, "\n"); !strings.Contains(w, "revoke") || !strings.Contains(w, "leases") || !strings.Contains(w, "--quota-backend-bytes") {
		t.Errorf("warnings on etcd %s with --allow-etcd-3.4 and no quota:\n%s\nwant the leases warning and the quota's fix", srv.Version, w)
	}
	actions, err := class.Setup(ctx, rootS, root, []class.Learner{{Name: "ada"}, {Name: "bob"}}, nil)
	if err != nil {
		t.Fatalf("class setup on etcd %s: %v", bin, err)
	}
	ada := plain
	ada.User, ada.Password = "ada", actions[0].Password
	r, err := embedetcd.Connect(ctx, ada, class.Prefix("ada"))
	if err != nil {
		t.Fatalf("ada connects: %v", err)
	}
	defer r.Close()
	cli, _ := r.Client()
	p := progress.New()
	p.RecordLabPassed("consensus-and-cas", "01_cas", time.Now())
	if err := class.NewPublisher(cli.KV).Publish(ctx, class.FromProgress("ada", p)); err != nil {
		t.Fatalf("ada publishes: %v", err)
	}
	raw, err := ada.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Put(ctx, class.Prefix("bob")+"lock", "ada"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("ada writing bob's key on etcd 3.4: %v, want permission denied", err)
	}
	board, err := class.LoadBoard(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := board.Summary("ada"); !ok || s.LabsPassed() != 1 {
		t.Errorf("board on etcd 3.4: ada %+v %v", s, ok)
	}
	if again, err := class.Setup(ctx, rootS, root, []class.Learner{{Name: "ada"}, {Name: "bob"}}, map[string]string{"ada": ada.Password}); err != nil {
		t.Fatal(err)
	} else {
		for _, a := range again {
			if len(a.Changes) > 0 {
				t.Errorf("second setup on etcd 3.4 changed %s: %v", a.Learner, a.Changes)
			}
		}
	}
}

func goarch() string {
	out, _ := exec.Command("go", "env", "GOARCH").Output()
	return strings.TrimSpace(string(out))
}

// waitReady waits until the server answers over TLS, or fails with its log.
func waitReady(t *testing.T, ctx context.Context, s access.Settings, logPath string) {
	t.Helper()
	for {
		cli, err := s.New(nil)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err = cli.Get(cctx, "ready")
			cancel()
			cli.Close()
			if err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("etcd did not come up: %v\n%s", err, tail(logPath))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func tail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return fmt.Sprint(strings.Join(lines[max(len(lines)-15, 0):], "\n"))
}
