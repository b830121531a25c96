package experiment

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/embedetcd/access"
)

func TestLabSchedulesListed(t *testing.T) {
	names := LabScheduleNames()
	if len(names) != len(labSchedules) || names[0] != "pause-owner" {
		t.Fatalf("LabScheduleNames = %v for %d schedules (the default, pause-owner, first)", names, len(labSchedules))
	}
	for _, n := range names {
		if LabScheduleSays(n) == "" {
			t.Errorf("schedule %s says nothing", n)
		}
	}
	if !LabScheduleNeedsCluster("etcd-leader-change") || LabScheduleNeedsCluster("pause-owner") {
		t.Error("only etcd-leader-change needs the in-process cluster")
	}
}

func TestLabViolationAt(t *testing.T) {
	for _, c := range []struct {
		summary string
		want    time.Duration
		ok      bool
	}{
		{"Not shown: Left-behind at 6.06 s: r1's process had exited", 6060 * time.Millisecond, true},
		{"kept-working at 12.5 s: r2 kept working", 12500 * time.Millisecond, true},
		{"Every replica's code ran until it was told to stop.", 0, false},
		{"no-leader: no replica's Work was ever called.", 0, false},
	} {
		got, ok := LabViolationAt(c.summary)
		if ok != c.ok || got != c.want {
			t.Errorf("LabViolationAt(%q) = %v, %v; want %v, %v", c.summary, got, ok, c.want, c.ok)
		}
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
