package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/atomicfile"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/pki"
)

// The class cluster's limits, as docs/class.md gives them: 4 GiB of
// backend (room for hundreds of learners' experiments, and well under a
// small disk), one hour of history, and requests of at most 256 KiB
// instead of etcd's 1.5 MiB (the largest thing the course writes is a
// submission's record, at most 128 KiB): no single put of a learner
// carries more.
const (
	ClassQuota      = 4 << 30
	ClassCompaction = time.Hour
	ClassMaxRequest = 256 << 10
)

// classDemoTLS makes a CA and a server certificate in dir for
// `playground etcd --class-demo` and returns the CA file and the options
// that serve TLS with them.
func classDemoTLS(dir, host string, opts []embedetcd.Option) (string, []embedetcd.Option, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("class demo: %w", err)
	}
	ca, err := pki.NewCA("playground class demo CA")
	if err != nil {
		return "", nil, err
	}
	caFile, err := ca.WriteCert(dir)
	if err != nil {
		return "", nil, fmt.Errorf("class demo: %w", err)
	}
	hosts := []string{"127.0.0.1", "localhost"}
	if host != "" && host != "127.0.0.1" && host != "localhost" {
		hosts = append(hosts, host)
	}
	pair, err := ca.Server("etcd", hosts)
	if err != nil {
		return "", nil, err
	}
	cert, key, err := pair.Write(dir, "server")
	if err != nil {
		return "", nil, fmt.Errorf("class demo: %w", err)
	}
	// What docs/class.md asks of a class cluster: a quota of its own, so
	// that one learner's writes alarm before the disk fills, and automatic
	// compaction, so that old revisions are given back.
	opts = append(opts, embedetcd.WithQuota(ClassQuota), embedetcd.WithAutoCompaction(ClassCompaction), embedetcd.WithMaxRequestBytes(ClassMaxRequest))
	return caFile, append(opts, embedetcd.WithClientTLS(embedetcd.ServerTLS{CertFile: cert, KeyFile: key, CAFile: caFile})), nil
}

// runClassDemo turns authentication on with a fresh root password, prints
// how to connect as the instructor, and waits for Ctrl-C.
func runClassDemo(ctx context.Context, env *Env, srv *embedetcd.Server, caFile string) error {
	plain := access.Settings{Endpoints: srv.Endpoints(), CACert: caFile}
	cli, err := plain.New(nil)
	if err != nil {
		return err
	}
	password := class.GeneratePassword()
	err = class.EnableAuth(ctx, cli, password)
	cli.Close()
	if err != nil {
		return fmt.Errorf("class demo: %w", err)
	}
	eps := plain.Endpoints[0]
	abs, _ := filepath.Abs(caFile)
	// The password goes to a file only its owner reads, not to the
	// terminal (scroll-back, screen sharing) nor to a command line (ps).
	pwFile := filepath.Join(filepath.Dir(abs), "root.password")
	if err := atomicfile.Write(pwFile, []byte(password+"\n"), 0o600); err != nil {
		return fmt.Errorf("class demo: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Class demo: TLS with the CA in %s, authentication on, user root\n(its password is in %s).\n\n", abs, pwFile)
	fmt.Fprintf(env.Stdout, "As the instructor, in another terminal:\n")
	fmt.Fprintf(env.Stdout, "  export %s=%s %s=%s %s=root %s=\"$(cat %s)\"\n", access.EnvEndpoints, eps, access.EnvCACert, abs, access.EnvUser, access.EnvPassword, pwFile)
	fmt.Fprintf(env.Stdout, "  playground class setup --learners learners.txt   # one name a line\n")
	fmt.Fprintf(env.Stdout, "  playground class status\n")
	fmt.Fprintf(env.Stdout, "Then, as a learner (a new terminal, without those variables):\n")
	fmt.Fprintf(env.Stdout, "  playground --class class-settings/NAME.json\n\n")
	fmt.Fprintf(env.Stdout, "etcdctl: export ETCDCTL_ENDPOINTS=%s ETCDCTL_CACERT=%s ETCDCTL_USER=root ETCDCTL_PASSWORD=\"$(cat %s)\"\n\n", eps, abs, pwFile)
	fmt.Fprintln(env.Stdout, "Press Ctrl-C to stop; the data is thrown away (the certificates stay).")
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return fmt.Errorf("stop etcd: %w", err)
	}
	fmt.Fprintln(env.Stdout, "etcd stopped; data removed.")
	return nil
}
