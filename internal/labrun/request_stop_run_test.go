package labrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// TestStopFaults: lab 07's replicas under the stop's faults, on real
// etcd. The reference returns in time when its network is cut through
// the run's stop (sever) and when it is told to stop while it waits its
// turn (stop); a resign with context.Background() hangs on the cut
// network and a Campaign on context.Background() hangs in line, and the
// verdict names each as hung-on-stop with the call it was in.
func TestStopFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lab 07's replica program and runs it under faults")
	}
	root, l := checkout(t, "07")
	sol := filepath.Join(root, "solutions", l.ID, l.File)
	jobs := []struct {
		name, source string
		fault        history.RequestFault
		call         string // the call a hang is in ("": the run holds)
	}{
		{"reference/sever", sol, stopFault(t, sol, history.SeverAfter, replica.RoleOwner, "concurrency.NewSession(", replica.StreamKeepAlive), ""},
		{"reference/stop", sol, stopFault(t, sol, history.StopAfter, replica.RoleNewcomer, "c.Client.Grant(", "LeaseGrant"), ""},
		{"unbounded_resign/sever", patched(t, root, l, "solutions/07_election/testdata/bugs/unbounded_resign.patch"), history.RequestFault{}, "(*Election).Resign"},
		{"campaign_background/stop", patched(t, root, l, "solutions/07_election/testdata/bugs/campaign_background.patch"), history.RequestFault{}, "(*Election).Campaign"},
	}
	for i := range jobs[2:] {
		j := &jobs[2+i]
		j.fault = jobs[i].fault // the reference's site: the patches change no line above it
		j.fault.Site = siteIn(t, j.source, j.fault.Site.RPC, map[string]string{"LeaseKeepAlive": "concurrency.NewSession(", "LeaseGrant": "c.Client.Grant("}[j.fault.Site.RPC])
	}
	hs := make([]history.History, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	var building sync.Mutex // one build at a time: each links etcd's client
	for i, j := range jobs {
		wg.Go(func() { hs[i], errs[i] = runWithFaults(&building, root, l, j.source, j.fault) })
	}
	wg.Wait()
	for i, j := range jobs {
		t.Run(j.name, func(t *testing.T) {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			h := hs[i]
			if fired := Fired(&h); len(fired) != 1 || fired[0].Fault != j.fault.Fault {
				t.Fatalf("fired %+v, want the %s", fired, j.fault)
			}
			if r1, r2 := firstEvent(&h, "r1"), firstEvent(&h, "r2"); r2 <= r1 {
				t.Errorf("r2's code said its first word at %v, r1's at %v: an exploring run starts its replicas one after another", r2, r1)
			}
			if j.call == "" {
				if !h.Verdict.Showed {
					t.Fatalf("the reference did not hold under %s: %s", j.fault, h.Verdict.Sentence())
				}
				took, ok := stopTook(&h)
				if !ok {
					t.Fatalf("the replica hit by %s never returned", j.fault)
				}
				// A figure for the grace's margin, not a bound: the
				// machine's load decides it.
				t.Logf("the reference returned %.2f s after it was told to stop", took.Seconds())
				return
			}
			bad := h.Verdict.Violations()
			if h.Verdict.Showed || len(bad) == 0 || bad[0].Violation != "hung-on-stop" || !strings.Contains(bad[0].Text, j.call) {
				t.Fatalf("under %s the verdict is %q, want hung-on-stop in %s", j.fault, h.Verdict.Sentence(), j.call)
			}
			t.Log(bad[0].Text)
		})
	}
}

// stopFault is a fault of kind k at the first request (or stream
// answer) rpc sends from the line of src that holds code, in role.
func stopFault(t *testing.T, src string, k history.FaultAt, role, code, rpc string) history.RequestFault {
	return history.RequestFault{ID: 1, Fault: k, Role: role, Site: siteIn(t, src, rpc, code), Occurrence: 1}
}

// siteIn is the call site of rpc at the first line of src holding code.
func siteIn(t *testing.T, src, rpc, code string) history.CallSite {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, code) {
			return history.CallSite{File: "labs/07_election/election.go", Line: i + 1, RPC: rpc}
		}
	}
	t.Fatalf("%s has no line with %q", src, code)
	return history.CallSite{}
}

// runWithFaults builds src as the learner's code and runs it under the
// request fault f, on an etcd of its own.
func runWithFaults(building *sync.Mutex, root string, l Lab, src string, f history.RequestFault) (history.History, error) {
	ctx := context.Background()
	building.Lock()
	bin, err := BuildWith(ctx, root, l, src)
	building.Unlock()
	if err != nil {
		return history.History{}, err
	}
	p := history.Params{Faults: []history.ScheduledFault{{Kind: RequestArmed, Request: &f}}}
	run, err := Start(ctx, l.Spec(bin, false, ""), p, experiment.Env{}, nil)
	if err != nil {
		return history.History{}, err
	}
	if _, err := run.Wait(); err != nil {
		return history.History{}, err
	}
	return run.History(), nil
}

// stopTook is how long the replica the fault hit took to return once
// told to stop: by the stop fault itself, or by the run's stop.
func stopTook(h *history.History) (time.Duration, bool) {
	fired := Fired(h)
	if len(fired) == 0 {
		return 0, false
	}
	who := fired[0].HitReplica
	told, ok := stopAt(h.Events)
	for _, e := range h.Events {
		if e.Replica == who && e.Kind == history.Note && e.Facts != nil && e.Facts.Op == string(history.StopAfter) {
			told, ok = e.At, true
		}
		if ok && e.Replica == who && e.At >= told && e.Kind == history.Note && strings.HasPrefix(e.Text, lab07Returned) {
			return e.At - told, true
		}
	}
	return 0, false
}

// firstEvent is when the replica name's process first reported.
func firstEvent(h *history.History, name string) time.Duration {
	for _, e := range h.Events {
		if e.Replica == name {
			return e.At
		}
	}
	return -1
}
