package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// handHistory is a small history written by hand: a lock taken, a fault
// from the learner and one from the script, the key deleted.
func handHistory() history.History {
	held := history.StoreKey{Key: "lock", Value: "p1", CreateRevision: 5, ModRevision: 5, Version: 1, Lease: 0x10}
	return history.History{Format: history.HistoryFormat, Scenario: "ttl-unlock-bug", Params: history.Params{Replicas: 3, TTL: 1, Seed: 7},
		Timing: history.Timing{AskedTTL: 1, GrantedTTL: 1, MinTTL: 1, Election: 666 * time.Millisecond},
		Events: []history.Event{
			{At: time.Second, Kind: history.Phase, Step: 1, Text: "P1 takes the lock"},
			{At: 1100 * time.Millisecond, Kind: history.KeyChanged, Step: 1, Facts: &history.Facts{Op: "put", Key: "lock", Revision: 5, Succeeded: true, Held: &held}},
			{At: 2 * time.Second, Kind: history.Phase, Step: 2, Text: "pause"},
			{At: 2500 * time.Millisecond, Kind: history.Paused, Step: 2, Replica: "p1", Origin: history.ByScript},
			{At: 3250 * time.Millisecond, Kind: history.Crashed, Step: 2, Replica: "p3", Origin: history.ByLearner},
			{At: 4 * time.Second, Kind: history.KeyChanged, Step: 2, Facts: &history.Facts{Op: "delete", Key: "lock", Revision: 6, Succeeded: true, Deleted: 1, Prev: []history.StoreKey{held}, Held: &history.StoreKey{Key: "lock", ModRevision: 6}}},
		}}
}

func TestHistoryRoundTrip(t *testing.T) {
	h := handHistory()
	v := history.Verdict{Scenario: h.Scenario, Showed: true, Summary: "ok"}
	h.Verdict = &v
	var b bytes.Buffer
	if err := history.Write(&b, h); err != nil {
		t.Fatal(err)
	}
	back, err := ReadHistory(&b)
	if err != nil {
		t.Fatal(err)
	}
	back.Started, h.Started = time.Time{}, time.Time{}
	if !reflect.DeepEqual(back, h) {
		t.Fatalf("round trip changed the history:\n%+v\n%+v", back, h)
	}
}

func TestHistoryRefusesOtherFormats(t *testing.T) {
	if _, err := ReadHistory(strings.NewReader(`{"format": 99, "scenario": "fencing"}`)); !errors.Is(err, history.ErrHistoryFormat) {
		t.Errorf("format 99: %v", err)
	}
	if _, err := ReadHistory(strings.NewReader(`{"format": 1, "scenario": "nope"}`)); !errors.Is(err, experiment.ErrUnknown) {
		t.Errorf("unknown scenario: %v", err)
	}
	if _, err := ReadHistory(strings.NewReader(`{"format": 1,`)); err == nil {
		t.Error("a cut file read without an error")
	}
}

func TestFaultScheduleAndHolds(t *testing.T) {
	h := handHistory()
	got := h.FaultSchedule()
	want := []history.ScheduledFault{{Step: 2, After: 1250 * time.Millisecond, Kind: history.Crashed, Replica: "p3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schedule %+v, want %+v", got, want)
	}
	if n := len(h.Faults()); n != 2 {
		t.Errorf("%d faults, want 2", n)
	}
	if held := h.HoldsAt(2); held["lock"].Value != "p1" {
		t.Errorf("after the put etcd held %+v", held)
	}
	if held := h.HoldsAt(len(h.Events)); len(held) != 0 {
		t.Errorf("after the delete etcd held %+v", held)
	}
}

// TestRunSavesItsHistory: with a history directory the run saves its
// history there when it ends, with the learner's prediction judged.
func TestRunSavesItsHistory(t *testing.T) {
	srv, _ := etcds(t)
	dir := t.TempDir()
	run, err := Start(context.Background(), "cas-race", history.Params{Replicas: 5}, experiment.Env{Etcd: srv, HistoryDir: dir, Prediction: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path, err := run.HistoryFile()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := ReadHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	want := casQuestion.Judge(&h)[0]
	if h.Prediction == nil || h.Prediction.Picked != casQuestion.Options[0].Text || h.Prediction.Correct != want || h.Verdict == nil {
		t.Errorf("saved prediction %+v (want correct=%v), verdict %v", h.Prediction, want, h.Verdict)
	}
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "cas-race-") {
		t.Errorf("saved as %s", path)
	}
}

// TestErrorsSayTheStep: a script's error comes back wrapped with the step
// it happened in, and still matches what it wraps.
func TestErrorsSayTheStep(t *testing.T) {
	srv, _ := etcds(t)
	boom := errors.New("boom")
	sc := &experiment.Scenario{Name: "errors-test", DefaultReplicas: 1, DefaultTTL: 1,
		Run: func(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
			run.Phase(ctx, "first")
			run.Phase(ctx, "second")
			return history.Verdict{}, fmt.Errorf("do it: %w", boom)
		}}
	run, err := experiment.Start(context.Background(), sc, history.Params{}, experiment.Env{Etcd: srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Wait()
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "step 2 (second): do it") {
		t.Errorf("got %v", err)
	}
}
