// Command playground is an interactive course on leader election, locks,
// leases and fencing tokens, run against a real embedded etcd.
package main

import (
	"context"
	"os"

	"github.com/ownership-election/playground/internal/cli"
	"github.com/ownership-election/playground/internal/grade"
)

func main() {
	grade.Supervise() // returns unless started as a grading's supervisor
	ctx, stop := cli.WithSignals(context.Background())
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
