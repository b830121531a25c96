package cli

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
	"github.com/ownership-election/playground/internal/progress"
)

// classCluster is a one-member TLS cluster with auth on, and the global
// flags that connect to it as root.
func classCluster(t *testing.T) (*classtest.Cluster, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := classtest.Start(ctx, t.TempDir(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, []string{"--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--cacert", c.CACert, "--user", "root:" + classtest.RootPassword}
}

// instructor is a client of class cluster c as its root user, as the
// instructor's playground connects; it is closed when the test ends.
func instructor(t *testing.T, c *classtest.Cluster) *clientv3.Client {
	t.Helper()
	root, err := c.Root.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// adaOnClass is a class cluster with one learner, ada, set up as an
// instructor sets one up: it returns the instructor's root client (closed
// when the test ends) and the settings file ada was handed.
func adaOnClass(t *testing.T) (*clientv3.Client, string) {
	t.Helper()
	c, _ := classCluster(t)
	root := instructor(t, c)
	actions, err := class.Setup(context.Background(), c.Root, root, []class.Learner{{Name: "ada"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ada.json")
	ada := c.Plain
	ada.User, ada.Password = "ada", actions[0].Password
	if err := ada.WriteFile(file); err != nil {
		t.Fatal(err)
	}
	return root, file
}

// TestClassCommands: an instructor sets up a class, hands out settings,
// a learner connects with them and publishes, the instructor sees it in
// class status, and removes the class again.
func TestClassCommands(t *testing.T) {
	c, asRoot := classCluster(t)
	dir := t.TempDir()
	roster := filepath.Join(dir, "learners.txt")
	os.WriteFile(roster, []byte("# a small class\nada\nbob secret-bob\n"), 0o644)
	out := filepath.Join(dir, "handout")

	code, stdout, stderr := runCLI(t, append(asRoot, "class", "setup", "--learners", roster, "--out", out)...)
	if code != 0 {
		t.Fatalf("class setup: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "2 learners, 2 changed") {
		t.Errorf("class setup output:\n%s", stdout)
	}
	code, stdout, _ = runCLI(t, append(asRoot, "class", "setup", "--learners", roster, "--out", out)...)
	if code != 0 || !strings.Contains(stdout, "2 learners, 0 changed") {
		t.Errorf("second class setup: exit %d\n%s", code, stdout)
	}
	ada, err := access.LoadFile(filepath.Join(out, "ada.json"))
	if err != nil || ada.User != "ada" || ada.Password == "" || len(ada.CACertPEM) == 0 {
		t.Fatalf("ada's settings: %+v %v", ada, err)
	}
	if st, _ := os.Stat(filepath.Join(out, "ada.json")); st.Mode().Perm() != 0o600 {
		t.Errorf("settings file mode %v, want 0600 (it holds a password)", st.Mode().Perm())
	}

	// Ada, with only her settings file, runs an experiment on the class
	// cluster and publishes progress.
	code, stdout, stderr = runCLI(t, "--class", filepath.Join(out, "ada.json"), "experiment", "run", "cas-race", "--json")
	if code != 0 {
		t.Fatalf("ada's experiment on the class cluster: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "--class", filepath.Join(out, "ada.json"), "experiment", "run", "least-privilege")
	if code != 0 || !strings.Contains(stdout, "permission denied") {
		t.Errorf("least-privilege as ada: exit %d\n%s", code, stdout)
	}
	ctx := context.Background()
	r, err := embedetcd.Connect(ctx, ada, class.Prefix("ada"))
	if err != nil {
		t.Fatal(err)
	}
	cli, _ := r.Client()
	p := progress.New()
	p.RecordLabPassed("consensus-and-cas", "01_cas", time.Now())
	if err := class.NewPublisher(cli.KV).Publish(ctx, class.FromProgress("ada", p)); err != nil {
		t.Fatal(err)
	}
	r.Close()

	code, stdout, stderr = runCLI(t, append(asRoot, "class", "status", "--json")...)
	if code != 0 {
		t.Fatalf("class status: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Learners []struct {
			Learner    string `json:"learner"`
			LabsPassed int    `json:"labs_passed"`
		} `json:"learners"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("class status --json: %v\n%s", err, stdout)
	}
	if len(doc.Learners) != 2 || doc.Learners[0].Learner != "ada" || doc.Learners[0].LabsPassed != 1 || doc.Learners[1].LabsPassed != 0 {
		t.Errorf("class status: %+v", doc.Learners)
	}
	code, stdout, _ = runCLI(t, append(asRoot, "class", "status", "--csv")...)
	if code != 0 || !strings.HasPrefix(stdout, "learner,pages_read,lessons_read") || strings.Count(stdout, "\n") != 3 {
		t.Errorf("class status --csv: exit %d\n%s", code, stdout)
	}

	// A learner cannot read the board.
	code, _, stderr = runCLI(t, "--class", filepath.Join(out, "bob.json"), "class", "status", "--plain")
	if code != 1 || !strings.Contains(stderr, "permission denied") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("bob reading the board: exit %d, %q (want one line saying permission denied)", code, stderr)
	}

	// Flags after the names, as after any command's arguments.
	code, stdout, stderr = runCLI(t, append(asRoot, "class", "remove", "ada", "--purge")...)
	if code != 0 || !strings.Contains(stdout, "ada") || !strings.Contains(stdout, "user deleted") || strings.Contains(stdout, "bob") || strings.Contains(stdout+stderr, "--purge") {
		t.Errorf("class remove ada --purge: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, append(asRoot, "class", "remove", "--learners", roster, "--purge")...)
	if code != 0 || !strings.Contains(stdout, "user deleted") {
		t.Errorf("class remove: exit %d\n%s", code, stdout)
	}
	_ = c
}

// TestConnectionProblemsAreNamed: each way of getting the connection wrong
// gives one line that says which, within seconds.
func TestConnectionProblemsAreNamed(t *testing.T) {
	c, _ := classCluster(t)
	eps := strings.Join(c.Endpoints(), ",")
	otherCA := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(otherCA, 0o700)
	// Another cluster's CA, to connect with the wrong one. (Stopped before
	// its data dir goes: etcd exits the process when its WAL vanishes.)
	other, err := classtest.Start(context.Background(), otherCA, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	plain := strings.Replace(eps, "https://", "http://", 1)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"wrong CA", []string{"--etcd-endpoints", eps, "--cacert", filepath.Join(otherCA, "ca.crt"), "--user", "root:" + classtest.RootPassword}, "not signed by the CA"},
		{"wrong password", []string{"--etcd-endpoints", eps, "--cacert", c.CACert, "--user", "root:nope"}, "wrong user name or password"},
		{"no user", []string{"--etcd-endpoints", eps, "--cacert", c.CACert}, "no user was given"},
		{"http to a TLS port", []string{"--etcd-endpoints", plain}, "speaks TLS but the endpoint is http://"},
		{"nobody there", []string{"--etcd-endpoints", "https://127.0.0.1:1", "--cacert", c.CACert}, "nothing answers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runCLI(t, append(tc.args, "experiment", "run", "cas-race")...)
			if code == 0 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q: want one line with %q", code, stderr, tc.want)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v to say so", d)
			}
		})
	}
	code, _, stderr := runCLI(t, "--etcd-endpoints", eps, "--cert", c.CACert, "experiment", "run", "cas-race")
	if code != 2 || !strings.Contains(stderr, "--cert and --key go together") {
		t.Errorf("--cert without --key: exit %d %q", code, stderr)
	}
}

func TestClassCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	code, stdout, stderr := runCLI(t, "class", "certs", "--hosts", "etcd1.example.edu, 10.0.0.5", "--out", dir)
	if code != 0 {
		t.Fatalf("class certs: exit %d %s", code, stderr)
	}
	if !strings.Contains(stdout, "etcd1.example.edu, 10.0.0.5") {
		t.Errorf("output does not list the hosts:\n%s", stdout)
	}
	if st, err := os.Stat(filepath.Join(dir, "server.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("server.key: %v %v, want mode 0600", st, err)
	}
	// The certificate must be accepted for every host by a client that
	// trusts only the CA.
	for _, host := range []string{"etcd1.example.edu", "10.0.0.5", "127.0.0.1"} {
		s := access.Settings{CACert: filepath.Join(dir, "ca.crt")}
		tc, err := s.TLSConfig()
		if err != nil {
			t.Fatal(err)
		}
		pair, err := os.ReadFile(filepath.Join(dir, "server.crt"))
		if err != nil {
			t.Fatal(err)
		}
		if err := verifyPEM(pair, tc.RootCAs, host); err != nil {
			t.Errorf("server.crt for %s: %v", host, err)
		}
	}
	if code, _, _ := runCLI(t, "class", "certs"); code != 2 {
		t.Errorf("class certs without --hosts: exit %d, want 2", code)
	}
}

func verifyPEM(certPEM []byte, roots *x509.CertPool, host string) error {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return errors.New("no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
	return err
}

// TestGradeOnClassCluster: a learner grades an etcd lab with only the
// settings file they were handed: the graders' tests run on the class
// cluster (TLS, auth, the learner's own prefix and user), the pass is
// verified, saved, and reaches the instructor's board.
func TestGradeOnClassCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (6 s or more); make test runs it")
	}
	env, out, errb := gradeEnv(t)
	root, file := adaOnClass(t)
	ctx := context.Background()
	var err error
	env.Etcd, err = access.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg := solutionConfig(t, "05_etcd_lock", "lock.go")
	if err := gradeLabs(ctx, env, []string{"05"}, cfg); err != nil {
		t.Fatalf("grading lab 05 on the class cluster: %v\n%s%s", err, out, errb)
	}
	if !strings.Contains(out.String(), "verified") {
		t.Errorf("no verified pass:\n%s", out)
	}
	board, err := class.LoadBoard(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := board.Summary("ada"); !ok || s.Labs["05_etcd_lock"].Passed.IsZero() {
		t.Errorf("the board does not show ada's pass: %+v (stderr %s)", s, errb)
	}
	// The tests left nothing behind, and wrote nowhere but ada's prefix.
	r, err := root.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range r.Kvs {
		k := string(kv.Key)
		if !strings.HasPrefix(k, class.Prefix("ada")) && !strings.HasPrefix(k, class.RosterPrefix) {
			t.Errorf("key outside ada's prefix after grading: %s", k)
		}
	}
}

// TestLearnerIsToldWhenTheClassRefusesThem: a learner's playground,
// connected and publishing, says within 10 s in its status line's words
// that its login is refused once the instructor changes the password,
// and again after the learner is removed.
func TestLearnerIsToldWhenTheClassRefusesThem(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (6 s or more); make test runs it")
	}
	c, _ := classCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root := instructor(t, c)
	for _, step := range []struct {
		name   string
		break_ func(name string) error
	}{
		{"password changed", func(name string) error {
			_, err := root.UserChangePassword(ctx, name, "a-new-password")
			return err
		}},
		{"learner removed", func(name string) error {
			_, err := class.Remove(ctx, root, []string{name}, false)
			return err
		}},
	} {
		t.Run(step.name, func(t *testing.T) {
			name := strings.ReplaceAll(step.name, " ", "-")
			actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: name}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := c.Plain
			s.User, s.Password = name, actions[0].Password
			cp := startClassPublisher(&Env{Etcd: s}, progress.New())
			defer cp.Close(time.Second)
			waitStatus(t, cp, "", 20*time.Second)
			if err := step.break_(name); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			waitStatus(t, cp, class.LoginRefused, 10*time.Second)
			t.Logf("told after %s", time.Since(t0).Round(time.Millisecond))
		})
	}
}

// waitStatus waits for the publisher to report want, failing after within.
func waitStatus(t *testing.T, cp *classPublisher, want string, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	var last string
	for {
		select {
		case got := <-cp.Status():
			if got == want {
				return
			}
			last = got
		case <-timeout:
			t.Fatalf("after %s the learner's status is %q, want %q", within, last, want)
		}
	}
}
