// Command election07 is one replica of lab 07 under a lab run: it runs the
// learner's election.Candidate (labs/07_election, or the reference through
// a build overlay) with a Work that writes to the playground's fenced
// resource with the term's token every 100 ms until its context ends. It
// is built and started by internal/labrun, never by hand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	election "github.com/ownership-election/playground/labs/07_election"

	"github.com/ownership-election/playground/internal/labrun/replica"
	"github.com/ownership-election/playground/labs"
)

func main() { os.Exit(run()) }

func run() int {
	conn := replica.Open()
	cfg, err := replica.ParseConfig(os.Args[1:])
	if err != nil {
		conn.Failed("%v", err)
		return 2
	}
	cli, err := replica.Dial(cfg)
	if err != nil {
		conn.Failed("%v", err)
		return 1
	}
	defer cli.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c := &election.Candidate{Client: cli, Prefix: cfg.Prefix, Name: cfg.Name, TTL: cfg.TTL, Work: work(conn, cfg.Name)}
	conn.Emit(replica.Event{Kind: "running", Text: "the lab's Candidate.Run started"})
	err = c.Run(ctx)
	switch {
	case errors.Is(err, labs.ErrNotImplemented):
		conn.Emit(replica.Event{Kind: "not-written", Text: "Candidate.Run returned labs.ErrNotImplemented: the lab is not written yet"})
		return 3
	case ctx.Err() == nil:
		conn.Failed("Candidate.Run returned before its context ended (%v): a leader loop must keep campaigning until it is stopped", err)
		return 1
	case err != nil:
		conn.Failed("Candidate.Run returned %v once stopped; it should return nil", err)
		return 1
	}
	conn.Emit(replica.Event{Kind: "note", Text: "Candidate.Run returned nil after its context ended"})
	return 0
}

// work is the job a leader does: report the term it was given, write
// with its token until its context ends, then report that it stopped.
func work(conn *replica.Conn, name string) func(context.Context, election.Term) {
	n := 0
	return func(ctx context.Context, term election.Term) {
		conn.Emit(replica.Event{Kind: "acquired", Token: term.Token,
			Text:  fmt.Sprintf("Work called for a term: key %s, token %d", term.Key, term.Token),
			Facts: &replica.Facts{Op: "campaign", Key: term.Key, Succeeded: true}})
		for ctx.Err() == nil {
			n++
			if _, err := conn.Write(term.Token, fmt.Sprintf("%s#%d", name, n)); err != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		conn.Emit(replica.Event{Kind: "stepped-down", Token: term.Token,
			Text: fmt.Sprintf("Work's context ended: stopped working with token %d", term.Token)})
	}
}
