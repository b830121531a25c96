package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

// A lab run's history replays as the live run printed it: the step that
// told a replica to stop and etcd's leader moves are there, the leader's
// accepted writes only with -v, and the verdict reads HELD or VIOLATION
// with the run's exit code.
func TestLabReplayPrintsAsTheRun(t *testing.T) {
	h := history.History{Format: history.HistoryFormat, Scenario: labrun.ScenarioName("07_election"),
		Params: history.Params{Replicas: 3, TTL: 2}, Timing: history.Timing{AskedTTL: 2}, Events: []history.Event{
			{At: 0, Kind: history.Phase, Step: 1, Text: "start 3 replicas"},
			{At: time.Second, Kind: history.WriteAccepted, Replica: "r1", Token: 5, Text: `write "r1#1" with token 5 accepted`},
			{At: 2 * time.Second, Kind: history.LeaderMoved, Replica: "m2", Origin: history.ByScript, Text: "raft leadership moved to m2"},
			{At: 3 * time.Second, Kind: history.Note, Replica: "r1", Text: "told to stop: SIGTERM, its Run's context is cancelled"},
		}}
	file := filepath.Join(t.TempDir(), "lab.json")
	writeHistory(t, file, h)
	code, out, errOut := runCLI(t, "experiment", "replay", file)
	if code != 1 || !strings.HasPrefix(lastLine(out), "verdict: VIOLATION: ") {
		t.Fatalf("replay of a run in which no Work was called: exit %d, %s\n%s", code, lastLine(out), errOut)
	}
	for _, want := range []string{"told to stop", "raft leadership moved to m2"} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay does not print %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "r1#1") {
		t.Errorf("the replay prints the leader's accepted writes without -v:\n%s", out)
	}
	if _, out, _ := runCLI(t, "experiment", "replay", file, "-v"); !strings.Contains(out, "r1#1") {
		t.Errorf("replay -v leaves out the accepted writes:\n%s", out)
	}
}
