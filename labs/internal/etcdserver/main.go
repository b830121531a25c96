// Command etcdserver runs a private embedded etcd (fast ticks, loopback,
// data thrown away) for the etcd labs' tests when nobody gave them one.
//
// The graders (labs/internal/etcdharness) start it with `go run` so that
// the lab test binaries do not link the etcd server themselves: a test
// binary with the server in it took 0.6 s longer to link on every grade.
// It prints the client URL as its first line on stdout and runs until its
// standard input is closed (the test process ending closes it, however it
// ends) or it is interrupted. Logs go to the playground's etcd log file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ownership-election/playground/embedetcd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	srv, err := embedetcd.Start(startCtx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdserver: %v (log: %s)\n", err, embedetcd.LogPath())
		os.Exit(1)
	}
	fmt.Println(srv.Endpoints()[0])
	go func() {
		io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "etcdserver: stop: %v\n", err)
		os.Exit(1)
	}
}
