package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
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
