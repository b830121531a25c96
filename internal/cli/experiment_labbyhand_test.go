package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun"
	"github.com/ownership-election/playground/internal/testwait"
)

// byHandWait bounds each wait of a by-hand run: the replica program's
// build (cold, labrun.BuildTimeout's 3 minutes), then a first leader
// (the runner waits 10 s and a TTL for one).
const byHandWait = 4 * time.Minute

// TestLabRunByHand: under --schedule by-hand the replicas run until an
// end line on --control's input, with the learner's faults (pause and
// resume r2) in between, and then the run ends as any other: a watch,
// every replica told to stop, the verdict from the history (the
// reference holds). Its recorded history replays with --faults and no
// input at all: the same faults at their steps, none sooner than it
// was, and the replay ends after its last fault, without waiting for an
// end.
func TestLabRunByHand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (two lab runs of 10 s or more); make test runs it")
	}
	t.Setenv("PLAYGROUND_STATE_DIR", t.TempDir())
	record := filepath.Join(t.TempDir(), "mine.json")
	in, feed := io.Pipe()
	defer feed.Close()
	var out, errb testwait.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Main(context.Background(), []string{"experiment", "run", "--lab", "07", "--reference", "--schedule", "by-hand", "--control", "--json", "--record", record}, in, &out, &errb)
	}()
	said := func() string { return out.String() + errb.String() }
	testwait.Until(t, byHandWait, "the by-hand schedule's step", func() bool {
		return sawEvent(out.String(), history.Phase, "", "schedule by-hand")
	}, said)
	for _, f := range []struct {
		line string
		kind history.Kind
	}{{"pause r2", history.Paused}, {"resume r2", history.Resumed}} {
		fmt.Fprintln(feed, f.line)
		testwait.Until(t, byHandWait, f.line, func() bool { return sawEvent(out.String(), f.kind, "r2", "") }, said)
	}
	fmt.Fprintln(feed, "end")
	var c int
	testwait.Until(t, byHandWait, "the run's end", func() bool {
		select {
		case c = <-code:
			return true
		default:
			return false
		}
	}, said)
	h, err := readHistoryFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if c != 0 || h.Verdict == nil || !h.Verdict.Showed {
		t.Fatalf("the reference by hand: exit %d, verdict %+v\n%s", c, h.Verdict, said())
	}
	ended := indexOf(h, history.Note, "ended by hand")
	watch := indexOf(h, history.Phase, "watch for")
	stop := indexOf(h, history.Phase, "stop:")
	resumed := indexOf(h, history.Resumed, "")
	if resumed < 0 || ended < resumed || watch < ended || stop < watch {
		t.Fatalf("want r2 resumed, then the end by hand, the watch and the stop; at events %d, %d, %d, %d", resumed, ended, watch, stop)
	}
	mine := labrun.FaultSchedule(&h)
	if len(mine) != 2 || h.Events[resumed].Origin != history.ByLearner {
		t.Fatalf("the learner's faults: %+v (the resume's origin %q)", mine, h.Events[resumed].Origin)
	}
	replayByHand(t, record, mine)
}

// replayByHand replays a recorded by-hand run and checks its faults
// against the recorded ones.
func replayByHand(t *testing.T, record string, mine []history.ScheduledFault) {
	t.Helper()
	again := filepath.Join(filepath.Dir(record), "again.json")
	code, stdout, stderr := runCLI(t, "experiment", "run", "--lab", "07", "--reference", "--faults", record, "--record", again)
	if code != 0 {
		t.Fatalf("the replay: exit %d\n%s%s", code, stdout, stderr)
	}
	h, err := readHistoryFile(again)
	if err != nil {
		t.Fatal(err)
	}
	got := labrun.FaultSchedule(&h)
	if len(got) != len(mine) {
		t.Fatalf("the replay's faults %+v, want %+v", got, mine)
	}
	for i, f := range got {
		// The replay waits out each fault's time into its step, so it
		// comes no sooner than the learner's key did; it hits the
		// replica in the same role (owner, waiter), whatever its name.
		if f.Kind != mine[i].Kind || f.Role != mine[i].Role || f.Role == "" || f.Step != mine[i].Step || f.After < mine[i].After {
			t.Errorf("replayed fault %d: %+v, recorded %+v", i, f, mine[i])
		}
	}
	watch := indexOf(h, history.Phase, "watch for")
	last := indexOf(h, history.Resumed, "")
	if indexOf(h, history.Phase, "your schedule: 2 faults") < 0 || watch < last || indexOf(h, history.Note, "ended by hand") >= 0 {
		t.Fatalf("the replay did not play the learner's schedule, then watch:\n%s", stdout)
	}
	if h.Events[watch].At-h.Events[last].At >= labrun.ByHandLimit {
		t.Fatalf("the replay waited %v after its last fault", h.Events[watch].At-h.Events[last].At)
	}
}

// sawEvent says whether the JSON lines in out have an event of kind,
// about replica (any if ""), whose text has text in it.
func sawEvent(out string, kind history.Kind, replica, text string) bool {
	for _, l := range strings.Split(out, "\n") {
		var e history.Event
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		if e.Kind == kind && (replica == "" || e.Replica == replica) && strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

// indexOf is the index of h's first event of kind whose text has text
// in it, or -1.
func indexOf(h history.History, kind history.Kind, text string) int {
	for i, e := range h.Events {
		if e.Kind == kind && strings.Contains(e.Text, text) {
			return i
		}
	}
	return -1
}
