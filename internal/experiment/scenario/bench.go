package scenario

import (
	"context"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// FailoverGap elects an owner among replicas with the given TTL, crashes
// it (orphaned lease, no revoke) and returns the time until another
// replica owns. It is the measurement behind failover-timing, exposed for
// the fidelity bench.
func FailoverGap(ctx context.Context, env experiment.Env, replicas int, ttl int64) (time.Duration, error) {
	var gap time.Duration
	sc := &experiment.Scenario{Name: "bench-failover", DefaultReplicas: 3, MinReplicas: 2, DefaultTTL: 1,
		Run: func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
			g, err := measureFailover(ctx, run, ttl, "bench/", 0)
			gap = g
			return history.Verdict{Showed: err == nil}, err
		}}
	run, err := experiment.Start(ctx, sc, history.Params{Replicas: replicas, TTL: ttl}, env, nil)
	if err != nil {
		return 0, err
	}
	_, err = run.Wait()
	return gap, err
}
