package cli

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strings"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/embedetcd/access"
)

func init() {
	Register(&Command{
		Name:    "etcd",
		Usage:   "etcd [--port N] [--host H]",
		Summary: "run an embedded etcd in the foreground for etcdctl or your own code",
		Help: `Flags:
  --port N           client port (0 picks a free one)
  --host H           address to listen on (default 127.0.0.1); anything but
                     loopback exposes etcd, which has no authentication
  --default-ticks    etcd's default ticks (2 s minimum lease TTL) instead of
                     100 ms / 500 ms ones (1 s)
  --class-demo DIR   a class cluster in miniature, to try class mode: TLS
                     with a CA made in DIR, authentication on, a root user;
                     prints the flags that connect to it

Ctrl-C stops it and throws the data away.`,
		Run: runEtcd,
	})
}

func runEtcd(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	port := fs.Int("port", 0, "client port (0 picks a free one)")
	host := fs.String("host", "127.0.0.1", "address to listen on; anything but loopback exposes etcd to your network")
	defaultTicks := fs.Bool("default-ticks", false, "use etcd's default 100 ms / 1 s ticks (2 s minimum lease TTL) instead of 100 ms / 500 ms (1 s minimum TTL)")
	demo := fs.String("class-demo", "", "TLS and auth, with certificates in `DIR`")
	args, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return Usagef("unexpected argument %q", args[0])
	}
	if env.Etcd.Remote() {
		return Usagef("--etcd-endpoints points at an existing cluster; there is nothing to start")
	}
	// It runs until Ctrl-C and mostly waits: ticks that keep it quiet.
	ticks := embedetcd.IdleTicks
	if *defaultTicks {
		ticks = embedetcd.DefaultTicks
	}
	opts := []embedetcd.Option{embedetcd.WithListen(*host, *port), embedetcd.WithTicks(ticks)}
	var demoCA string
	if *demo != "" {
		var err error
		if demoCA, opts, err = classDemoTLS(*demo, *host, opts); err != nil {
			return err
		}
	}
	if ip := net.ParseIP(*host); *demo == "" && ((ip == nil && *host != "localhost") || (ip != nil && !ip.IsLoopback())) {
		fmt.Fprintf(env.Stderr, "warning: listening on %s: other machines can reach this etcd, which has no authentication\n", *host)
	}
	srv, err := embedetcd.Start(ctx, opts...)
	if err != nil {
		return err
	}
	eps := strings.Join(srv.Endpoints(), ",")
	minTTL := 1
	if *defaultTicks {
		minTTL = 2
	}
	fmt.Fprintf(env.Stdout, "etcd is ready: %s (minimum lease TTL %d s)\n", eps, minTTL)
	if ip := net.ParseIP(*host); ip != nil && ip.IsUnspecified() {
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.Endpoints()[0], "http://"))
		fmt.Fprintf(env.Stdout, "listening on every address of this machine: other machines use http://<its address>:%s\n", port)
	}
	fmt.Fprintf(env.Stdout, "logs: %s\n\n", embedetcd.LogPath(opts...))
	if *demo != "" {
		return runClassDemo(ctx, env, srv, demoCA)
	}
	fmt.Fprintf(env.Stdout, "export ETCDCTL_ENDPOINTS=%s\n", eps)
	fmt.Fprintf(env.Stdout, "export %s=%s   # for the labs' graders and a second playground\n\n", access.EnvEndpoints, eps)
	fmt.Fprintln(env.Stdout, "Press Ctrl-C to stop; the data is thrown away.")
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return fmt.Errorf("stop etcd: %w", err)
	}
	fmt.Fprintln(env.Stdout, "etcd stopped; data removed.")
	return nil
}
