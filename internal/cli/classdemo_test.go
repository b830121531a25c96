package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"

	"github.com/ownership-election/playground/internal/testwait"
)

// TestClassDemoKeepsThePasswordOffTheScreen: the demo's root password is
// in a 0600 file, never in its output, and the cluster it starts passes
// class setup's checks without a warning (its own quota and compaction).
func TestClassDemoKeepsThePasswordOffTheScreen(t *testing.T) {
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithCancel(context.Background())
	var out testwait.Buffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, []string{"etcd", "--class-demo", dir}, strings.NewReader(""), &out, &out) }()
	defer func() { cancel(); <-done }()
	testwait.Until(t, 60*time.Second, "the demo to come up", func() bool { return strings.Contains(out.String(), "Press Ctrl-C") }, out.String)
	pwFile := filepath.Join(dir, "root.password")
	b, err := os.ReadFile(pwFile)
	if err != nil {
		t.Fatalf("the demo's password file: %v\n%s", err, out.String())
	}
	password := strings.TrimSpace(string(b))
	if st, _ := os.Stat(pwFile); st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", pwFile, st.Mode().Perm())
	}
	if strings.Contains(out.String(), password) {
		t.Errorf("the root password is in the demo's output:\n%s", out.String())
	}
	var eps string
	for _, f := range strings.Fields(out.String()) {
		if v, ok := strings.CutPrefix(f, access.EnvEndpoints+"="); ok {
			eps = v
		}
	}
	root := access.Settings{Endpoints: []string{eps}, CACert: filepath.Join(dir, "ca.crt"), User: "root", Password: password}
	cli, err := root.New(nil)
	if err != nil {
		t.Fatalf("root with the printed endpoint and the password file: %v", err)
	}
	defer cli.Close()
	srv, err := class.CheckServer(ctx, root, cli, false)
	if err != nil || len(srv.Warnings) > 0 {
		t.Errorf("class setup's check of the demo cluster: %v, warnings %q", err, srv.Warnings)
	}
}
