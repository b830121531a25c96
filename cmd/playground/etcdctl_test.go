package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEtcdctlAgainstPlaygroundEtcd drives a client we did not write
// (Debian's etcdctl, installed by .ci/run) against `playground etcd`.
func TestEtcdctlAgainstPlaygroundEtcd(t *testing.T) {
	etcdctl, err := exec.LookPath("etcdctl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("etcdctl not installed; .ci/run installs the etcd-client package")
		}
		t.Skip("etcdctl not installed (apt-get install etcd-client); CI runs this test")
	}
	bin := filepath.Join(t.TempDir(), "playground")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, "etcd")
	cmd.Env = append(os.Environ(), "PLAYGROUND_STATE_DIR="+state)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	endpoints := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "export ETCDCTL_ENDPOINTS="); ok {
			endpoints = v
			break
		}
	}
	if endpoints == "" {
		t.Fatal("playground etcd never printed an ETCDCTL_ENDPOINTS line")
	}
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		rest <- b.String()
	}()
	run := func(args ...string) string {
		t.Helper()
		c := exec.CommandContext(ctx, etcdctl, args...)
		c.Env = append(os.Environ(), "ETCDCTL_API=3", "ETCDCTL_ENDPOINTS="+endpoints)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("etcdctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("put", "owner", "replica-a"); !strings.Contains(out, "OK") {
		t.Fatalf("put: %q", out)
	}
	if out := run("get", "owner"); out != "owner\nreplica-a\n" {
		t.Fatalf("get: %q", out)
	}
	if out := run("lease", "grant", "5"); !strings.Contains(out, "granted with TTL(5s)") {
		t.Fatalf("lease grant: %q", out)
	}
	if out := run("lock", "jobs", "echo", "inside-the-lock"); !strings.Contains(out, "inside-the-lock") {
		t.Fatalf("lock: %q", out)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Stopped by SIGTERM: it cleans up and exits 143, as every command does.
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 143 {
		t.Fatalf("playground etcd did not exit with 143 on SIGTERM: %v", err)
	}
	if out := <-rest; !strings.Contains(out, "data removed") {
		t.Fatalf("no shutdown message after SIGTERM; output was:\n%s", out)
	}
}
