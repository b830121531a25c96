package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment/scenario"
	"github.com/ownership-election/playground/internal/history"
)

// runCLI runs the playground with args, no input and a state folder of
// its own, and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	return run(t, "", args...)
}

// writeHistory writes h to a history file at path, as --record does.
func writeHistory(t *testing.T, path string, h history.History) {
	t.Helper()
	var b bytes.Buffer
	if err := history.Write(&b, h); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestExperimentList(t *testing.T) {
	code, out, _ := runCLI(t, "experiment", "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range knownExperiments() {
		if !strings.Contains(out, name+" ") {
			t.Errorf("list lacks %s:\n%s", name, out)
		}
	}
	if n := strings.Count(out, "\n"); n != len(knownExperiments()) || n < 11 {
		t.Errorf("%d lines for %d experiments", n, len(knownExperiments()))
	}
}

func TestExperimentRunJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "experiment", "run", "cas-race", "--json", "--replicas", "5", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 100 {
		t.Fatalf("only %d lines", len(lines))
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %q", i+1, l)
		}
		if i == len(lines)-1 {
			if m["kind"] != "verdict" || m["showed"] != true || m["scenario"] != "cas-race" {
				t.Errorf("last line is not a showed verdict: %s", l)
			}
		} else if _, ok := m["t"]; !ok {
			t.Errorf("line %d has no time: %s", i+1, l)
		}
	}
}

func TestExperimentRunText(t *testing.T) {
	code, out, _ := runCLI(t, "experiment", "run", "least-privilege")
	if code != 0 || !strings.Contains(out, "verdict: SHOWN") || !strings.Contains(out, "permission denied") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestExperimentUsage(t *testing.T) {
	for _, args := range [][]string{
		{"experiment"},
		{"experiment", "run"},
		{"experiment", "run", "no-such-experiment"},
		{"experiment", "run", "cas-race", "--ttl", "-1"},
		{"experiment", "run", "cas-race", "--step-delay", "-1s"},
		{"experiment", "run", "cas-race", "--faults", "/no/such/file"},
		{"experiment", "replay"},
		{"experiment", "replay", "/no/such/file"},
		{"experiment", "frobnicate"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestExperimentNeedsInProcess(t *testing.T) {
	code, _, errOut := runCLI(t, "--etcd-endpoints", "http://127.0.0.1:1", "experiment", "run", "quorum")
	if code != exitNeedsInProcess || !strings.Contains(errOut, "in-process") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestExperimentRecordReplay: a recorded run replays without etcd to the
// same verdict, and its file runs again with --faults.
func TestExperimentRecordReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.json")
	code, out, errOut := runCLI(t, "experiment", "run", "fencing", "--record", file)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	ran := lastLine(out)
	code, again, errOut := runCLI(t, "experiment", "replay", file)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, errOut)
	}
	replayed := lastLine(again)
	if cut(ran) != cut(replayed) || !strings.HasPrefix(replayed, "verdict: SHOWN") {
		t.Errorf("run said\n%s\nreplay says\n%s", ran, replayed)
	}
	if code, out, _ := runCLI(t, "experiment", "replay", file, "--json"); code != 0 || !strings.Contains(lastLine(out), `"showed":true`) {
		t.Errorf("replay --json: exit %d, last line %s", code, lastLine(out))
	}
	if code, _, errOut := runCLI(t, "experiment", "run", "cas-race", "--faults", file); code != 2 || !strings.Contains(errOut, "a run of fencing") {
		t.Errorf("--faults with another scenario's file: exit %d, %s", code, errOut)
	}
}

// TestExperimentReplaysLearnerFaults: a schedule of learner faults in a
// history file is injected again by --faults, at the same step.
func TestExperimentReplaysLearnerFaults(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	h := history.History{Format: history.HistoryFormat, Scenario: "singleton-vs-election", Params: history.Params{Replicas: 4, Seed: 3},
		Timing: history.Timing{AskedTTL: 1}, Events: []history.Event{
			{At: time.Second, Kind: history.Phase, Step: 3},
			{At: time.Second, Kind: history.Paused, Step: 3, Replica: "r4", Origin: history.ByLearner},
			{At: time.Second + 200*time.Millisecond, Kind: history.Resumed, Step: 3, Replica: "r4", Origin: history.ByLearner},
		}}
	writeHistory(t, in, h)
	out := filepath.Join(dir, "out.json")
	runCLI(t, "experiment", "run", "singleton-vs-election", "--faults", in, "--record", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := scenario.ReadHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	if got.Params.Seed != 3 || got.Params.Replicas != 4 {
		t.Errorf("params %+v, want the file's seed 3 and 4 replicas", got.Params)
	}
	s := got.FaultSchedule()
	if len(s) != 2 || s[0].Kind != history.Paused || s[0].Replica != "r4" || s[0].Step != 3 || s[1].Kind != history.Resumed || s[1].After < 200*time.Millisecond {
		t.Errorf("schedule injected again: %+v", s)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// cut drops the run time at the end of a verdict line.
func cut(line string) string {
	if i := strings.LastIndex(line, " ("); i > 0 {
		return line[:i]
	}
	return line
}
