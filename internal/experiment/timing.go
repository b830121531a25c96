package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ownership-election/playground/internal/history"
)

// clusterTiming is the cluster's timing as the run uses it: the history's
// record, with the time limits the run derives from it.
type clusterTiming history.Timing

// readTiming asks etcd for a lease of the scenario's TTL and one of 1 s
// (its minimum), revokes both, and derives how long a leader change may
// take: etcd's minimum TTL is ceil(1.5 election timeouts), so an election
// timeout is at most 2/3 of it.
func readTiming(ctx context.Context, cli *clientv3.Client, asked int64) (history.Timing, error) {
	t := history.Timing{AskedTTL: asked}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, ttl := range []int64{asked, 1} {
		var resp *clientv3.LeaseGrantResponse
		err := RetryTransient(tctx, func(ctx context.Context) error {
			var err error
			resp, err = cli.Grant(ctx, ttl)
			return err
		})
		if err != nil {
			return t, fmt.Errorf("read the cluster's timing: grant %ds: %w", ttl, err)
		}
		cli.Revoke(tctx, resp.ID)
		if ttl == asked {
			t.GrantedTTL = resp.TTL
		}
		if ttl == 1 {
			t.MinTTL = resp.TTL
		}
	}
	t.Election = time.Duration(t.MinTTL) * time.Second * 2 / 3
	return t, nil
}

// applyTiming makes the run work with the TTL etcd really grants: a
// scenario whose waits are counted in TTLs then waits as long as etcd's
// leases last. It says so when that is not the TTL asked for.
func (run *Run) applyTiming(t history.Timing) {
	run.timing = clusterTiming(t)
	if t.GrantedTTL > run.Params.TTL {
		run.Params.TTL = t.GrantedTTL
		run.timingNote = fmt.Sprintf("etcd grants no lease under %ds here (its election timeout is up to %s): the run uses %s instead of the %ds asked",
			t.MinTTL, t.Election.Round(10*time.Millisecond), history.TTLLabel(t.GrantedTTL), t.AskedTTL)
	}
}

// transient reports whether err is one a request should be sent again
// for: the cluster is electing a leader or a member went away, and a
// majority may well answer the next try.
func transient(err error) bool {
	if err == nil {
		return false
	}
	switch {
	case errors.Is(err, rpctypes.ErrLeaderChanged), errors.Is(err, rpctypes.ErrNoLeader),
		errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost):
		return true
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "leader changed") || strings.Contains(msg, "no leader")
}

// tryTimeout is how long the first try of a request may go unanswered
// before it is given up and sent again (or, for a write, checked): two
// election timeouts. A member that forwarded the request to a leader
// that then died answers only after its own request timeout (7 s on
// default ticks), long after a new leader would have answered. Each
// later try waits twice as long as the one before (nextTry), so a
// cluster that is merely slow still gets to answer.
func (t clusterTiming) tryTimeout() time.Duration {
	if t.Election <= 0 {
		return 2 * time.Second
	}
	return max(2*t.Election, 500*time.Millisecond)
}

// NextTry is the time limit of the try after one limited to d.
func NextTry(d time.Duration) time.Duration { return min(2*d, 30*time.Second) }

// electionWait is how long a request may keep meeting a leader change
// before the run gives up on the cluster: raft elects within one to two
// election timeouts, and a split vote costs another; five cover a few
// rounds.
func (t clusterTiming) electionWait() time.Duration {
	if t.Election <= 0 {
		return 5 * time.Second
	}
	return 5 * t.Election
}

// UnknownOutcome reports whether a write that ended with err may still
// have been applied: the leader changed or its member went away while
// the request was out, or it went unanswered (a timeout). Only a read
// can tell.
func UnknownOutcome(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.DeadlineExceeded {
		return true
	}
	return transient(err)
}

// RetryEach is RetryTransient with a time limit on each try: a first try
// left unanswered for perTry is sent again, as one that met a leader
// change is, with twice the time (nextTry). Only for requests that are
// safe to send twice (reads, keep-alives).
func RetryEach(ctx context.Context, perTry time.Duration, f func(ctx context.Context) error) error {
	return retryWhile(ctx, UnknownOutcome, func(ctx context.Context) error {
		tctx, cancel := context.WithTimeout(ctx, perTry)
		defer cancel()
		perTry = NextTry(perTry)
		return f(tctx)
	})
}

// RetryTransient calls f until it succeeds, fails for good, or ctx ends,
// waiting a little between tries: a member crash that keeps quorum costs
// a retry, not the run.
func RetryTransient(ctx context.Context, f func(ctx context.Context) error) error {
	return retryWhile(ctx, transient, f)
}

// retryWhile calls f until it returns an error that again does not
// accept (or none), or ctx ends, waiting longer between tries up to
// half a second.
func retryWhile(ctx context.Context, again func(error) bool, f func(ctx context.Context) error) error {
	wait := 50 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil || !again(err) || ctx.Err() != nil {
			return err
		}
		if Sleep(ctx, wait) != nil {
			return err
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}
