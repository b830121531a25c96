package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// quorumScenario is the scenario quorum.
var quorumScenario = &experiment.Scenario{
	Name:            "quorum",
	Resource:        true,
	Title:           "An elected owner while etcd members stop and restart",
	Summary:         "On a 3-member in-process cluster an elected owner renews its lease while the script stops a follower, then the raft leader, then restarts one; after each step it tries a write and a lease grant.",
	Faults:          "stop etcd members, then restart them",
	NeedsCluster:    true,
	DefaultReplicas: 1, MinReplicas: 1, MaxReplicas: 3,
	DefaultTTL: 1,
	Run:        runQuorum,
	Predict:    quorumQuestion,
	Shows:      []history.Property{{Name: "quorum-decides", Check: quorumDecides}},
}

// probe tries a write and a lease grant, each bounded by d; it reports
// whether both got through.
func probe(ctx context.Context, run *experiment.Run, d time.Duration) (bool, error) {
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if _, err := run.Admin().Put(pctx, "probe", fmt.Sprint(time.Now().UnixNano())); err != nil {
		return false, fmt.Errorf("put probe: %w", err)
	}
	g, err := run.Admin().Grant(pctx, 5)
	if err != nil {
		return false, fmt.Errorf("grant: %w", err)
	}
	run.Admin().Revoke(ctx, g.ID)
	return true, nil
}

// quorumProbes are the figures the script records, in order, with what
// each should read: 1 a write and a grant went through, 0 they stalled.
var quorumProbes = []struct {
	figure, label string
	want          float64
}{
	{"ok_3_of_3", "3 of 3 up", 1}, {"ok_2_of_3", "2 of 3 up", 1}, {"ok_1_of_3", "1 of 3 up", 0}, {"ok_1_of_3_again", "1 of 3 up a TTL later", 0}, {"ok_after_restart", "after a restart", 1},
}

// quorumDecides: writes and grants work while a majority is up, stall
// without one, and work again when it is back.
func quorumDecides(f *history.Findings) (bool, string) {
	ok := true
	var parts []string
	for _, p := range quorumProbes {
		x, seen := f.Figure(p.figure)
		if !seen {
			return false, fmt.Sprintf("writes and lease grants were never tried with %s", p.label)
		}
		ok = ok && x == p.want
		parts = append(parts, fmt.Sprintf("%s %s", p.label, works(x == 1)))
	}
	return ok, "writes and lease grants: " + strings.Join(parts, ", ")
}

func runQuorum(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	v := history.Verdict{Figures: map[string]float64{}}
	cl := run.Cluster()
	members := cl.Members()
	rs, err := run.NewReplicas(run.Params.Replicas)
	if err != nil {
		return v, err
	}
	if err := run.Phase(ctx, "3 members up; r1 is elected and renews its lease"); err != nil {
		return v, err
	}
	if err := startFirstOwner(ctx, run, rs, leaderLoop("election/", 250*time.Millisecond, true), "election/"); err != nil {
		return v, err
	}
	lead, err := cl.Leader()
	if err != nil {
		return v, err
	}
	run.Emit(history.Event{Kind: history.LeaderObserved, Text: "raft leader is " + members[lead].Name})
	report := func(figure, label string, d time.Duration) bool {
		start := time.Now()
		ok, err := probe(ctx, run, d)
		text := fmt.Sprintf("%s: a write and a lease grant went through in %s", label, time.Since(start).Round(time.Millisecond))
		if !ok {
			text = fmt.Sprintf("%s: a write and a lease grant did not complete within %s: stalled (%v)", label, d, err)
		}
		run.Emit(history.Event{Kind: history.Measured, Figure: figure, Value: boolValue(ok), Unit: "ok", Text: text,
			Facts: &history.Facts{Op: "put", Key: "probe", Succeeded: ok, Err: errText(err, "")}})
		return ok
	}
	report("ok_3_of_3", "3 of 3 up", 2*time.Second)

	follower := (lead + 1) % len(members)
	if err := run.Phase(ctx, fmt.Sprintf("stop %s (a follower): 2 of 3 left, still a majority", members[follower].Name)); err != nil {
		return v, err
	}
	if err := run.StopMember(members[follower]); err != nil {
		return v, err
	}
	report("ok_2_of_3", "2 of 3 up", 3*time.Second)

	if err := run.Phase(ctx, fmt.Sprintf("stop %s (the leader): 1 of 3 left, no majority", members[lead].Name)); err != nil {
		return v, err
	}
	if err := run.StopMember(members[lead]); err != nil {
		return v, err
	}
	report("ok_1_of_3", "1 of 3 up", time.Second)
	if err := experiment.Sleep(ctx, run.TTLDuration()); err != nil {
		return v, err
	}
	report("ok_1_of_3_again", "1 of 3 up, a TTL later", time.Second)

	if err := run.Phase(ctx, fmt.Sprintf("restart %s: 2 of 3 up again", members[lead].Name)); err != nil {
		return v, err
	}
	if err := run.RestartMember(ctx, members[lead]); err != nil {
		return v, err
	}
	experiment.WaitFor(ctx, 5*time.Second, func() bool { ok, _ := probe(ctx, run, time.Second); return ok })
	report("ok_after_restart", "2 of 3 up again", 2*time.Second)
	if experiment.WaitFor(ctx, run.TTLDuration()+5*time.Second, func() bool { return anyOwner(rs) }) {
		run.Note("a replica owns again")
	}
	if err := run.RestartMember(ctx, members[follower]); err != nil {
		return v, err
	}
	return v, nil
}

func works(ok bool) string {
	if ok {
		return "worked"
	}
	return "stalled"
}
