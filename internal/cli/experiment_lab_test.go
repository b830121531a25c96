package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
)

func TestExperimentLabUsage(t *testing.T) {
	for _, args := range [][]string{
		{"experiment", "run", "--lab", "99"},
		{"experiment", "run", "--lab", "07", "--schedule", "no-such-schedule"},
		{"experiment", "run", "--lab", "07", "fencing"},
		{"experiment", "run", "--lab", "07", "--replicas", "1"},
		{"experiment", "run", "--lab", "07", "--replicas", "8"},
		{"experiment", "run", "--lab", "07", "--schedule", "crash-owner", "--faults", "x.json"},
		{"experiment", "run", "--lab", "07", "--faults", "/no/such/file"},
		{"experiment", "run", "--lab", "07", "--schedule", "by-hand"},
		{"experiment", "run", "--reference"},
		{"experiment", "run", "fencing", "--schedule", "crash-owner"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if strings.TrimSpace(stderr) == "" {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}

// TestLabRunOnClassCluster: with the settings file a class hands out,
// a lab run's replicas run on the class cluster (TLS, auth) as the
// learner's etcd user, under the learner's prefix, the only place that
// user may write: the reference holds there only if every replica's
// client logged in with the learner's user and kept to that prefix.
func TestLabRunOnClassCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (6 s or more); make test runs it")
	}
	root, file := adaOnClass(t)
	ctx := context.Background()
	before, err := root.Get(ctx, "", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	// The learner's shell may name another cluster: the replicas must
	// not take it from there.
	t.Setenv(access.EnvEndpoints, "http://127.0.0.1:1")
	record := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI(t, "--class", file, "experiment", "run", "--lab", "07", "--reference", "--schedule", "crash-owner", "--record", record)
	if code != 0 {
		t.Fatalf("the reference on the class cluster: exit %d\n%s%s", code, stdout, stderr)
	}
	h, err := readHistoryFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Verdict.Showed {
		t.Fatalf("verdict: %+v", h.Verdict)
	}
	leaders := 0
	for _, e := range h.Events {
		if e.Kind == history.Acquired {
			leaders++
		}
	}
	if leaders < 2 {
		t.Fatalf("%d terms on the class cluster, want a leader before and after the crash:\n%s", leaders, stdout)
	}
	// The run wrote on the class cluster (and cleaned up after itself).
	after, err := root.Get(ctx, "", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if after.Header.Revision-before.Header.Revision < 4 {
		t.Errorf("the class cluster's revision moved from %d to %d: the replicas did not run there", before.Header.Revision, after.Header.Revision)
	}
	left, err := root.Get(ctx, class.Prefix("ada")+"experiments/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Kvs) != 0 {
		t.Errorf("the run left %d keys under ada's prefix, first %s", len(left.Kvs), left.Kvs[0].Key)
	}
	// Moving etcd's raft leader is for the in-process cluster only.
	code, _, stderr = runCLI(t, "--class", file, "experiment", "run", "--lab", "07", "--reference", "--schedule", "etcd-leader-change")
	if code != exitNeedsInProcess || !strings.Contains(stderr, "in-process") {
		t.Errorf("etcd-leader-change on the class cluster: exit %d, want %d (stderr %q)", code, exitNeedsInProcess, stderr)
	}
}

// TestExperimentLabByCourseNumber: --lab takes a lab as the lessons and
// the lab screen number it ("7.2"), as well as by its folder; a lab
// without a runner is refused with the ones that have one, both ways.
func TestExperimentLabByCourseNumber(t *testing.T) {
	for name, want := range map[string]string{"7.1": "05_etcd_lock", "5.2": "06_fenced_write", "7.2": "07_election", "lab 7.3": "08_herd", "9.1": "09_shards", "07": "07_election", "09_shards": "09_shards", "5": "05_etcd_lock", "election": "07_election", "herd": "08_herd"} {
		if l, ok := runnerLab(name); !ok || l.ID != want {
			t.Errorf("--lab %s: got %q (%v), want %s", name, l.ID, ok, want)
		}
	}
	if l, ok := runnerLab("3.1"); ok {
		t.Errorf("--lab 3.1 found a runner: %s", l.ID)
	}
	code, _, stderr := runCLI(t, "experiment", "run", "--lab", "3.1")
	if code != 2 || !strings.Contains(stderr, "7.2 (07_election)") {
		t.Errorf("--lab 3.1: exit %d, stderr %q", code, stderr)
	}
}

// A build's progress: nothing for a quick one; in text, a line once it
// has taken a second and then one every buildLineEvery with the time, the
// packages and the last one named; with --json, lines of kind "build"
// (labrun.ParseBuildLine reads them) at most once a second.
func TestBuildPrinter(t *testing.T) {
	var out, errOut strings.Builder
	env := &Env{Stdout: &out, Stderr: &errOut}
	p := buildPrinter(env, false, "05_etcd_lock")
	for _, s := range []float64{0.5, 1.2, 5, 11.5, 12, 22} {
		p(labrun.BuildProgress{Elapsed: time.Duration(s * float64(time.Second)), Packages: int(s * 10), Current: "google.golang.org/grpc"})
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if out.Len() != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "building the replica program of labs/05_etcd_lock") ||
		lines[1] != "  building: 12s, 115 packages compiled, last google.golang.org/grpc" || !strings.HasPrefix(lines[2], "  building: 22s, 220 packages") {
		t.Fatalf("text progress:\n%s", errOut.String())
	}
	out.Reset()
	errOut.Reset()
	p = buildPrinter(env, true, "05_etcd_lock")
	for _, s := range []float64{0.5, 1.2, 1.5, 2.3} {
		p(labrun.BuildProgress{Elapsed: time.Duration(s * float64(time.Second)), Packages: 3})
	}
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	if errOut.Len() != 0 || len(lines) != 2 {
		t.Fatalf("JSON progress:\n%s", out.String())
	}
	if bp, ok := labrun.ParseBuildLine([]byte(lines[1])); !ok || bp.Packages != 3 || bp.Elapsed != 2300*time.Millisecond {
		t.Fatalf("the JSON line %s read back as %+v, %v", lines[1], bp, ok)
	}
}
