package labrun

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

func TestLabSchedulesListed(t *testing.T) {
	names := ScheduleNames()
	if len(names) != len(labSchedules) || names[0] != "pause-owner" {
		t.Fatalf("LabScheduleNames = %v for %d schedules (the default, pause-owner, first)", names, len(labSchedules))
	}
	for _, n := range names {
		if ScheduleSays(n) == "" {
			t.Errorf("schedule %s says nothing", n)
		}
	}
	if !scheduleNeedsCluster("etcd-leader-change") || scheduleNeedsCluster("pause-owner") {
		t.Error("only etcd-leader-change needs the in-process cluster")
	}
	if !EndsByHand(ByHand) || EndsByHand("calm") || !slices.Contains(names, ByHand) || names[len(names)-1] != "calm" {
		t.Errorf("%s ends by hand, calm (last) by itself: %v", ByHand, names)
	}
}

// TestLabByHandNeedsAnEnd: a by-hand run with nothing to end it is
// refused before anything starts.
func TestLabByHandNeedsAnEnd(t *testing.T) {
	_, err := Start(t.Context(), Spec{Lab: "07_election", Schedule: ByHand}, history.Params{}, experiment.Env{}, nil)
	if err == nil || !strings.Contains(err.Error(), "ends by hand") {
		t.Fatalf("by-hand without LabSpec.End: %v", err)
	}
}

// A replica process gets the run's etcd settings, never the ones of the
// shell the playground was started from.
func TestLabEnvDropsTheShellsEtcd(t *testing.T) {
	shell := []string{"HOME=/home/ada", access.EnvEndpoints + "=https://elsewhere:2379", access.EnvUser + "=bob", access.EnvClass + "=/tmp/bob.json"}
	run := access.Settings{Endpoints: []string{"https://class:2379"}, User: "ada", Password: "secret", CACert: "/ca.crt"}
	env := labEnv(shell, run)
	for _, want := range []string{"HOME=/home/ada", access.EnvEndpoints + "=https://class:2379", access.EnvUser + "=ada", access.EnvPassword + "=secret", access.EnvCACert + "=/ca.crt"} {
		if !slices.Contains(env, want) {
			t.Errorf("no %s in %v", want, env)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "elsewhere") || strings.Contains(kv, "bob") {
			t.Errorf("the shell's setting %s reached the replica", kv)
		}
	}
}

// A lab run's fault schedule keeps the steps no key does, a replica told
// to stop and etcd's leader moved, in order with the faults around them,
// and a replay with them is the lab run's to play, all of it.
func TestLabFaultScheduleKeepsStopsAndLeaderMoves(t *testing.T) {
	h := history.History{Events: []history.Event{
		{At: time.Second, Kind: history.Phase, Step: 2},
		{At: time.Second, Kind: history.Partitioned, Step: 2, Replica: "r1", Origin: history.ByScript},
		{At: time.Second, Kind: history.Note, Step: 2, Replica: "r1", Facts: &history.Facts{Op: labStopOp, Succeeded: true}},
		{At: time.Second + 100*time.Millisecond, Kind: history.Crashed, Step: 2, Replica: "r1", Origin: history.ByScript},
		{At: 2 * time.Second, Kind: history.LeaderMoved, Step: 2, Replica: "m2", Origin: history.ByScript},
		{At: 2 * time.Second, Kind: history.Note, Step: 2, Replica: "r2", Text: "a note of the code's own"},
	}}
	got := FaultSchedule(&h)
	var kinds []history.Kind
	for _, f := range got {
		kinds = append(kinds, f.Kind)
	}
	if want := []history.Kind{history.Partitioned, ToldToStop, history.Crashed, history.LeaderMoved}; !slices.Equal(kinds, want) {
		t.Fatalf("schedule %v, want %v", kinds, want)
	}
	if got[3].Replica != "m2" || got[3].After != time.Second || !faultsNeedCluster(got) {
		t.Fatalf("the leader move %+v: want m2, 1 s into the step, on the in-process cluster", got[3])
	}
	if own, rest := labOwnFaults(got); len(own) != 4 || len(rest) != 0 {
		t.Fatalf("a replay with a stop: the lab plays %d steps, injectSchedule %d", len(own), len(rest))
	}
	if got[3].Role != "" {
		t.Fatalf("the leader move %+v is aimed by role, but names an etcd member", got[3])
	}
	// A cut aimed by role (the part r1 played) is the lab's to aim; one
	// without (a schedule recorded before roles were) injectSchedule's.
	if own, rest := labOwnFaults(got[:1]); len(own) != 1 || len(rest) != 0 || faultsNeedCluster(got[:1]) {
		t.Fatalf("a replay of a cut by role: the lab plays %d steps, injectSchedule %d", len(own), len(rest))
	}
	plain := []history.ScheduledFault{got[0]}
	plain[0].Role = ""
	if own, rest := labOwnFaults(plain); len(own) != 0 || len(rest) != 1 {
		t.Fatalf("a replay of a cut only: the lab plays %d steps, injectSchedule %d", len(own), len(rest))
	}
}
