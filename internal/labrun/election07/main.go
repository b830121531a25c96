// Command election07 is one replica of lab 07 under a lab run: it runs the
// learner's election.Candidate (labs/07_election, or the reference through
// a build overlay) with a Work that writes to the playground's fenced
// resource with the term's token every 100 ms until its context ends. It
// is built and started by internal/labrun, never by hand.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	election "github.com/ownership-election/playground/labs/07_election"

	"github.com/ownership-election/playground/internal/labrun/replica"
)

func main() { os.Exit(run()) }

func run() int {
	p, code := replica.Start()
	if p == nil {
		return code
	}
	defer p.Close()
	cfg := p.Config
	c := &election.Candidate{Client: p.Client, Prefix: cfg.Prefix, Name: cfg.Name, TTL: cfg.TTL, Work: work(p.Conn, cfg.Name)}
	p.Conn.Emit(replica.Event{Kind: "running", Text: "the lab's Candidate.Run started"})
	return p.Finish(c.Run(p.Ctx), replica.Ending{Call: "Candidate.Run",
		Early:   "a leader loop must keep campaigning until it is stopped",
		Stopped: "Candidate.Run returned nil after its context ended"})
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
