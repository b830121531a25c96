package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/labs"
)

// Shards is how many shards lab 09's workers share: the replica program
// (internal/labrun/shards09) runs its Worker over them and the
// playground's checker expects each to be owned, so both read it here.
const Shards = 10

// Process is a replica process once started: its line to the playground,
// its settings, its etcd client, and the context that its shutdown
// (SIGTERM, or an interrupt) cancels. Each lab's main does only the lab's
// job with it.
type Process struct {
	Conn   *Conn
	Config Config
	Client *clientv3.Client
	Ctx    context.Context
	stop   context.CancelFunc
}

// Start opens the protocol, reads the flags the playground passed, dials
// etcd through the replica's fault proxies and makes the shutdown's
// context. When it cannot, it has said why to the playground and returns
// the exit code the process must end with (2: bad flags, 1: no client).
func Start() (*Process, int) {
	conn := Open()
	cfg, err := ParseConfig(os.Args[1:])
	if err != nil {
		conn.Failed("%v", err)
		return nil, 2
	}
	cli, err := Dial(cfg)
	if err != nil {
		conn.Failed("%v", err)
		return nil, 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	go reportStuck(ctx, conn, cfg.StuckAfter)
	return &Process{Conn: conn, Config: cfg, Client: cli, Ctx: ctx, stop: stop}, 0
}

// Close stops listening for the shutdown and closes the client.
func (p *Process) Close() {
	p.stop()
	p.Client.Close()
}

// Ending says how a lab's code is expected to end, for Finish.
type Ending struct {
	// Call is the lab's code the replica ran ("Candidate.Run").
	Call string
	// Early, if set, makes returning before the shutdown (or returning
	// an error after it) the replica's failure, and says why ("a leader
	// loop must keep campaigning until it is stopped"). A replica's own
	// loop, which returns only when stopped, leaves it empty.
	Early string
	// Stopped is the note once the code returned after the shutdown
	// (the parent matches the lab's "returned" note by its beginning).
	Stopped string
}

// Finish reports how the lab's code ended, err being what it returned,
// and gives the process's exit code: 3 when the lab is not written yet
// (labs.ErrNotImplemented), 1 for a failure, 0 when it returned as it
// should once stopped.
func (p *Process) Finish(err error, e Ending) int {
	switch {
	case errors.Is(err, labs.ErrNotImplemented):
		p.Conn.Emit(Event{Kind: "not-written", Text: fmt.Sprintf("%s returned %v: the lab is not written yet", e.Call, err)})
		return 3
	case e.Early != "" && p.Ctx.Err() == nil:
		p.Conn.Failed("%s returned before its context ended (%v): %s", e.Call, err, e.Early)
		return 1
	case e.Early != "" && err != nil:
		p.Conn.Failed("%s returned %v once stopped; it should return nil", e.Call, err)
		return 1
	case err != nil:
		p.Conn.Failed("%s: %v", e.Call, err)
		return 1
	}
	p.Conn.Emit(Event{Kind: "note", Text: e.Stopped})
	return 0
}
