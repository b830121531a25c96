// Command playground is an interactive course on leader election, locks,
// leases and fencing tokens, run against a real embedded etcd.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ownership-election/playground/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
