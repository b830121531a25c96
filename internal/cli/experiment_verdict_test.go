package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// verdictJSON is the last line of --json: the verdict.
type verdictJSON struct {
	Kind       string `json:"kind"`
	Showed     bool   `json:"showed"`
	Outcome    string `json:"outcome"`
	Summary    string `json:"summary"`
	FaultsFile string `json:"faults_file"`
	Error      string `json:"error"`
	Exit       *int   `json:"exit"`
	Violations []struct {
		Property  string           `json:"property"`
		Violation string           `json:"violation"`
		Held      bool             `json:"held"`
		At        *float64         `json:"at"`
		Replicas  []string         `json:"replicas"`
		Events    []map[string]any `json:"events"`
		Text      string           `json:"text"`
	} `json:"violations"`
	Findings []struct {
		Property string   `json:"property"`
		Held     bool     `json:"held"`
		At       *float64 `json:"at"`
		Replicas []string `json:"replicas"`
	} `json:"findings"`
}

func lastVerdict(t *testing.T, out string) verdictJSON {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var v verdictJSON
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil || v.Kind != "verdict" {
		t.Fatalf("the last line is not a verdict (%v):\n%s", err, lines[len(lines)-1])
	}
	return v
}

// lab05Released is a run of lab 05 in which r1, woken late, released r2's
// lock: its Release's requests deleted the key etcd held for r2.
func lab05Released() history.History {
	const key = "locks/resource"
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	put := func(at int, value string, rev int64) history.Event {
		k := history.StoreKey{Key: key, Value: value, CreateRevision: rev, ModRevision: rev, Version: 1, Lease: 7}
		return history.Event{At: ms(at), Kind: history.KeyChanged, Facts: &history.Facts{Op: "put", Key: key, Revision: rev, Held: &k, Succeeded: true}}
	}
	del := func(at int, prev string, rev, created int64) history.Event {
		p := history.StoreKey{Key: key, Value: prev, CreateRevision: created, ModRevision: created, Version: 1, Lease: 7}
		return history.Event{At: ms(at), Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: key, Revision: rev, Deleted: 1, Prev: []history.StoreKey{p}, Held: &history.StoreKey{Key: key, ModRevision: rev}, Succeeded: true}}
	}
	took := func(at int, who string, rev int64) history.Event {
		return history.Event{At: ms(at), Kind: history.Acquired, Replica: who, Token: rev, Facts: &history.Facts{Op: "acquire", Key: key, Revision: rev, Succeeded: true}}
	}
	release := history.Event{At: ms(40), Kind: history.Note, Replica: "r1", Token: 2, Text: "released", Facts: &history.Facts{Op: "release", Key: key, Revision: 5, Succeeded: true}}
	return history.History{Format: history.HistoryFormat, Scenario: "lab-05_etcd_lock", Params: history.Params{Replicas: 2, TTL: 2, Seed: 1},
		Events: []history.Event{put(10, "r1", 2), took(11, "r1", 2), del(20, "r1", 3, 2), put(30, "r2", 4), took(31, "r2", 4), release, del(41, "r2", 5, 4)}}
}

// TestReplayJSONListsViolations: the verdict line of --json lists the
// findings that did not hold as violations, each with its property, the
// violation's name, its instant in seconds, the replicas, the events and
// the sentence; the text verdict says the same in words.
func TestReplayJSONListsViolations(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "lab05.json")
	writeHistory(t, rec, lab05Released())
	code, out, errOut := run(t, "", "experiment", "replay", "--json", rec)
	if code != 1 {
		t.Fatalf("replay --json of a violation: exit %d\n%s%s", code, out, errOut)
	}
	v := lastVerdict(t, out)
	if v.Showed || len(v.Violations) != 1 {
		t.Fatalf("violations %+v in\n%s", v.Violations, out)
	}
	bad := v.Violations[0]
	if bad.Property != "releases-own" || bad.Violation != "released-another" || bad.Held || bad.At == nil || *bad.At != 0.04 {
		t.Fatalf("the violation: %+v", bad)
	}
	if !slices.Equal(bad.Replicas, []string{"r1", "r2"}) || len(bad.Events) != 1 || bad.Events[0]["kind"] != "note" || bad.Events[0]["replica"] != "r1" {
		t.Fatalf("who and what: %v, %v", bad.Replicas, bad.Events)
	}
	// A violation found in the learner's code is said plainly: in the
	// fields (outcome violated, exit 1) and in the words ("Violated:",
	// never "Not shown:", which is a scenario's).
	if !strings.HasPrefix(bad.Text, "released-another at 0.04 s: r1's Release") || !strings.HasPrefix(v.Summary, "Violated: Released-another at 0.04 s: r1's Release") {
		t.Fatalf("text %q, summary %q", bad.Text, v.Summary)
	}
	if v.Outcome != history.OutcomeViolated || v.Exit == nil || *v.Exit != history.ExitViolation {
		t.Fatalf("outcome %q, exit %v: want violated, 1", v.Outcome, v.Exit)
	}
	code, out, _ = run(t, "", "experiment", "replay", rec)
	body := strings.TrimPrefix(v.Summary, "Violated: ")
	if code != 1 || !strings.Contains(out, "verdict: VIOLATION: "+body) || !strings.Contains(out, "violated: releases-own (released-another)") {
		t.Fatalf("replay in words: exit %d\n%s", code, out)
	}
}

// TestReplayOfAnEarlierFile: a history recorded by b31819c, whose verdict
// has only its summary, replays: judged again by the scenario's
// properties, the verdict reads word for word as recorded, no violations,
// and the findings say where the two owners were.
func TestReplayOfAnEarlierFile(t *testing.T) {
	rec := "../history/testdata/ttl-unlock-bug-b31819c.json"
	recorded := "With a plain delete, P1's unlock deleted lock-naive, which held P2's lock (created at revision 4, not P1's 2); then P3 took the lock: two owners at once, p2 (token 4) and p3 (token 6), while etcd held P3's key. With the versioned unlock, P1's unlock was refused: lock-versioned's ModRevision is 10, not 8 (it holds P2's lock), and there was never more than one owner."
	code, out, errOut := run(t, "", "experiment", "replay", "--json", rec)
	if code != 0 {
		t.Fatalf("replay --json: exit %d\n%s", code, errOut)
	}
	v := lastVerdict(t, out)
	if !v.Showed || v.Summary != recorded || v.Violations == nil || len(v.Violations) != 0 {
		t.Fatalf("verdict %+v\nwant the recorded summary\n%s", v, recorded)
	}
	if len(v.Findings) != 2 || v.Findings[0].Property != "two-owners" || v.Findings[0].At == nil || *v.Findings[0].At != 1.392987583 || !slices.Equal(v.Findings[0].Replicas, []string{"p3", "p2"}) {
		t.Fatalf("findings %+v", v.Findings)
	}
	code, out, errOut = run(t, "", "experiment", "replay", rec)
	if code != 0 || !strings.Contains(out, "verdict: SHOWN: "+recorded) || errOut != "" {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
}
