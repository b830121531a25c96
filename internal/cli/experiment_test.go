package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/tui"
	"github.com/ownership-election/playground/internal/tui/theme"
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

func TestExperimentScreenFactory(t *testing.T) {
	course, _, err := loadCourse(&Env{}, "")
	if err != nil || course == nil {
		t.Fatalf("load the embedded course: %v", err)
	}
	factory := experimentScreens(course, "tester", nil, "")
	scr, _ := factory("fencing", nil, theme.NewStyles(true, true))
	scr.SetSize(80, 24)
	v := ansi.Strip(scr.View())
	if !strings.Contains(v, "Predict first") || !strings.Contains(v, "Runs on an in-process etcd started for this run") {
		t.Fatalf("the fencing screen should open on its predict question:\n%s", v)
	}
	if len(scr.ShortHelp()) == 0 || scr.Capturing() {
		t.Error("help or capturing wrong")
	}
	scr.Close()
	bad, _ := factory("no-such-experiment", nil, theme.NewStyles(true, true))
	if !strings.Contains(bad.View(), "no experiment") {
		t.Errorf("unknown experiment view: %q", bad.View())
	}
}

// When the shared cluster given on the command line failed, an experiment
// does not quietly run on an in-process etcd: it says the shared one is
// unreachable and runs elsewhere only when the learner says so; the top
// line then says where it runs.
func TestExperimentAsksBeforeLeavingAFailedSharedEtcd(t *testing.T) {
	course, _, _ := loadCourse(&Env{}, "")
	st := theme.NewStyles(true, true)
	holder := &etcdHolder{err: errors.New("context deadline exceeded")}
	factory := experimentScreens(course, "tester", holder, "https://class.example:2379")
	scr, _ := factory("renewal", nil, st)
	scr.SetSize(100, 30)
	v := ansi.Strip(scr.View())
	if !strings.Contains(v, "The shared etcd at https://class.example:2379 is not reachable: context deadline exceeded") || !strings.Contains(v, "y run it on an in-process etcd") {
		t.Fatalf("no question before falling back:\n%s", v)
	}
	scr, _ = scr.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if v := ansi.Strip(scr.View()); !strings.Contains(v, "not reachable") {
		t.Fatalf("another key fell back:\n%s", v)
	}
	scr, _ = scr.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if v := ansi.Strip(scr.View()); !strings.Contains(v, "Runs on an in-process etcd started for this run") {
		t.Fatalf("after y:\n%s", v)
	}
	scr.Close()

	// Still connecting: it waits, and a failure then asks too.
	scr, _ = experimentScreens(course, "tester", &etcdHolder{}, "https://class.example:2379")("renewal", nil, st)
	scr.SetSize(100, 30)
	if v := ansi.Strip(scr.View()); !strings.Contains(v, "Connecting to the shared etcd at https://class.example:2379") {
		t.Fatalf("while connecting:\n%s", v)
	}
	scr, _ = scr.Update(tui.EtcdReadyMsg{Err: errors.New("connection refused")})
	if v := ansi.Strip(scr.View()); !strings.Contains(v, "not reachable: connection refused") {
		t.Fatalf("after the failure:\n%s", v)
	}
}
