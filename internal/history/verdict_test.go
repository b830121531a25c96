package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// twoOwners is a hand-written run: r1 takes the lock with token 2, pauses
// and wakes while r2 holds it with token 5, and writes with its old
// token, which the resource takes.
func twoOwners() *History {
	return &History{Scenario: "hand", Events: []Event{
		{At: 1 * time.Second, Kind: Acquired, Replica: "r1", Token: 2},
		{At: 2 * time.Second, Kind: Paused, Replica: "r1"},
		{At: 3 * time.Second, Kind: Acquired, Replica: "r2", Token: 5},
		{At: 4 * time.Second, Kind: Resumed, Replica: "r1"},
		{At: 4500 * time.Millisecond, Kind: WriteAccepted, Replica: "r1", Token: 2},
	}}
}

// sawTwoOwners is a scenario's property in the sentence form: Judge makes
// its finding.
var sawTwoOwners = Property{Name: "two-owners", Check: func(f *Findings) (bool, string) {
	if len(f.TwoOwners) == 0 {
		return false, "there was never more than one owner"
	}
	return true, "two owners at once, " + strings.Join(f.TwoOwners[0].Owners, " and ")
}}

// A property in the sentence form gets the part's first overlap as its
// instant, its owners (the one whose act made it first) and its event.
func TestFindingOfTwoOwners(t *testing.T) {
	v := Judge(twoOwners(), []Property{sawTwoOwners}, nil)
	if !v.Showed || len(v.Findings) != 1 {
		t.Fatalf("verdict %+v", v)
	}
	f := v.Findings[0]
	if f.Property != "two-owners" || !f.Held || !f.Timed || f.At != 4500*time.Millisecond {
		t.Fatalf("finding %+v: want two-owners, held, at 4.5s (r1, awake, wrote beside r2)", f)
	}
	if !slices.Equal(f.Replicas, []string{"r1", "r2"}) {
		t.Fatalf("replicas %v, want r1 (whose write made it) then r2", f.Replicas)
	}
	if len(f.Events) != 1 || f.Events[0].Kind != WriteAccepted || f.Events[0].Replica != "r1" {
		t.Fatalf("events %+v, want r1's write", f.Events)
	}
	if want := "Two owners at once, r1 (token 2) and r2 (token 5)."; v.Sentence() != want {
		t.Fatalf("sentence %q, want %q", v.Sentence(), want)
	}
	if v.Violations() != nil {
		t.Fatalf("violations of a verdict shown: %+v", v.Violations())
	}
	// The write is both the overlap and a stale write: on a tie the
	// overlap is cited, with both owners.
	if e, who, ok := Find(twoOwners(), "").first(); !ok || e.At != 4500*time.Millisecond || len(who) != 2 {
		t.Fatalf("first finding %+v, %v, %v", e, who, ok)
	}
}

// A stale write alone is cited with its writer.
func TestFindingOfStaleWrite(t *testing.T) {
	h := &History{Events: []Event{
		{At: time.Second, Kind: Acquired, Replica: "r2", Token: 7},
		{At: 2 * time.Second, Kind: Released, Replica: "r2", Token: 7},
		{At: 3 * time.Second, Kind: WriteRejected, Replica: "r1", Token: 3},
	}}
	refused := Property{Name: "stale-write-refused", Check: func(f *Findings) (bool, string) {
		return len(f.Stale) == 1 && !f.Stale[0].Accepted, "the resource refused it"
	}}
	f := Judge(h, []Property{refused}, nil).Findings[0]
	if !f.Held || !f.Timed || f.At != 3*time.Second || !slices.Equal(f.Replicas, []string{"r1"}) || len(f.Events) != 1 || f.Events[0].Kind != WriteRejected {
		t.Fatalf("finding %+v", f)
	}
}

// breaksAt is a lab rule's shape: it writes its own finding, with what
// broke, where and who.
var breaksAt = Property{Name: "releases-own", Find: func(f *Findings) Finding {
	e, ok := f.FirstEvent(KindIs(WriteAccepted, ""))
	if !ok {
		return Finding{Held: true, Text: "every release deleted its caller's own lock"}
	}
	return Finding{Violation: "released-another", At: e.At, Timed: true, Replicas: []string{e.Replica, "r2"}, Events: []Event{e},
		Text: "released-another at 4.50 s: r1's Release deleted r2's lock"}
}}

// A rule's finding keeps its violation, instant and replicas; Judge adds
// the name and the part; the sentence puts what did not hold first, then
// what held, then the run's error, as verdicts always said it.
func TestFindingOfALabRule(t *testing.T) {
	v := Judge(twoOwners(), []Property{sawTwoOwners, breaksAt}, errors.New("boom"))
	if v.Showed {
		t.Fatal("shown with a rule broken")
	}
	bad := v.Violations()
	if len(bad) != 1 || bad[0].Property != "releases-own" || bad[0].Violation != "released-another" || bad[0].At != 4500*time.Millisecond || bad[0].Replicas[0] != "r1" {
		t.Fatalf("violations %+v", bad)
	}
	if f, ok := v.TimedViolation(); !ok || f.Violation != "released-another" {
		t.Fatalf("timed violation %+v, %v", f, ok)
	}
	want := "Not shown: Released-another at 4.50 s: r1's Release deleted r2's lock. What it did show: Two owners at once, r1 (token 2) and r2 (token 5). The run failed: boom."
	if got := v.Sentence(); got != want {
		t.Fatalf("sentence\n%q\nwant\n%q", got, want)
	}
	if got := bad[0].Sentence(); got != "Released-another at 4.50 s: r1's Release deleted r2's lock." {
		t.Fatalf("the finding's sentence %q", got)
	}
}

// A property of a part the run never reached did not hold, at no
// instant; a violation without an instant is not where a timeline opens.
func TestFindingOfAPartNeverReached(t *testing.T) {
	v := Judge(twoOwners(), []Property{{Name: "late", Part: "later", Check: sawTwoOwners.Check}}, nil)
	f := v.Findings[0]
	if v.Showed || f.Held || f.Timed || f.Property != "late" || f.Part != "later" || v.Sentence() != "Not shown: The run never reached later." {
		t.Fatalf("verdict %q: %+v", v.Sentence(), f)
	}
	if _, ok := v.TimedViolation(); ok {
		t.Fatal("a violation without an instant has no time")
	}
}

// A verdict's JSON has its sentence as "summary" and its findings, the
// instant in seconds (null without one); it reads back field for field,
// the instant to the nanosecond.
func TestVerdictJSON(t *testing.T) {
	v := Judge(twoOwners(), []Property{sawTwoOwners, breaksAt, {Name: "late", Part: "later", Check: sawTwoOwners.Check}}, nil)
	v.Findings[1].At = 4634123457 * time.Nanosecond
	v.Figures["gap_s"] = 1.5
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Summary  string `json:"summary"`
		Findings []map[string]any
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Summary != v.Sentence() || len(raw.Findings) != 3 {
		t.Fatalf("JSON %s", b)
	}
	if at := raw.Findings[1]["at"]; at != 4.634123457 || raw.Findings[1]["violation"] != "released-another" {
		t.Fatalf("the violation in JSON: %v", raw.Findings[1])
	}
	if at, ok := raw.Findings[2]["at"]; !ok || at != nil {
		t.Fatalf("a finding without an instant has \"at\": %v, %v", at, ok)
	}
	var back Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("read back\n%+v\nwrote\n%+v", back, v)
	}
}

// A history file recorded by an earlier version (b31819c, before
// findings) has a verdict with only its summary: it reads, its sentence
// is the recorded one, and judged again it gets findings.
func TestVerdictOfAnEarlierFile(t *testing.T) {
	f, err := os.Open("testdata/ttl-unlock-bug-b31819c.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	recorded := "With a plain delete, P1's unlock deleted lock-naive, which held P2's lock (created at revision 4, not P1's 2); then P3 took the lock: two owners at once, p2 (token 4) and p3 (token 6), while etcd held P3's key. With the versioned unlock, P1's unlock was refused: lock-versioned's ModRevision is 10, not 8 (it holds P2's lock), and there was never more than one owner."
	if h.Verdict == nil || !h.Verdict.Showed || h.Verdict.Findings != nil || h.Verdict.Sentence() != recorded {
		t.Fatalf("recorded verdict %+v", h.Verdict)
	}
	var again bytes.Buffer
	if err := Write(&again, h); err != nil {
		t.Fatal(err)
	}
	if h2, err := Read(&again); err != nil || h2.Verdict.Sentence() != recorded {
		t.Fatalf("written and read again: %v, %+v", err, h2.Verdict)
	}
	naive := sawTwoOwners
	naive.Part = "naive unlock (plain delete)"
	fd := Judge(&h, []Property{naive}, nil).Findings[0]
	if !fd.Held || fd.At != 1392987583*time.Nanosecond || !slices.Equal(fd.Replicas, []string{"p3", "p2"}) {
		t.Fatalf("judged again: %+v", fd)
	}
}

// TimedViolation is the first violation at an instant (what
// experiment.LabViolationAt read from the summary's first "name at 6.06
// s"): a violation of the run as a whole is passed over, and a verdict
// that held has none.
func TestTimedViolation(t *testing.T) {
	whole := Finding{Property: "leader-again", Violation: "no-leader", Text: "no-leader: no replica's Work was ever called"}
	left := Finding{Property: "released-on-stop", Violation: "left-behind", At: 6060 * time.Millisecond, Timed: true, Replicas: []string{"r1"}, Text: "left-behind at 6.06 s: r1's process had exited"}
	kept := Finding{Property: "stops-when-lost", Violation: "kept-working", At: 12500 * time.Millisecond, Timed: true, Text: "kept-working at 12.50 s: r2 kept working"}
	held := Finding{Property: "no-failure", Held: true, Text: "every replica's code ran until it was told to stop, and then stopped"}
	for _, c := range []struct {
		findings []Finding
		want     time.Duration
		ok       bool
	}{
		{[]Finding{held, left, kept}, 6060 * time.Millisecond, true},
		{[]Finding{whole, kept}, 12500 * time.Millisecond, true},
		{[]Finding{held}, 0, false},
		{[]Finding{whole}, 0, false},
	} {
		f, ok := Verdict{Findings: c.findings}.TimedViolation()
		if ok != c.ok || f.At != c.want {
			t.Errorf("TimedViolation of %q = %v, %v; want %v, %v", Verdict{Findings: c.findings}.Sentence(), f.At, ok, c.want, c.ok)
		}
	}
}

// A verdict of rules (a lab run) that found a violation says so plainly:
// its outcome is violated, its sentence begins "Violated:" (never "Not
// shown:", a scenario's word for what it failed to demonstrate), and
// its report lists the violation with its property and exits 1.
func TestRulesVerdictSaysViolated(t *testing.T) {
	v := Judge(twoOwners(), []Property{breaksAt, sawTwoOwners}, nil)
	v.Rules = true
	if v.Outcome() != OutcomeViolated {
		t.Fatalf("outcome %q, want violated", v.Outcome())
	}
	want := "Violated: Released-another at 4.50 s: r1's Release deleted r2's lock. What held: Two owners at once, r1 (token 2) and r2 (token 5)."
	if got := v.Sentence(); got != want {
		t.Fatalf("sentence\n%q\nwant\n%q", got, want)
	}
	if head, body := v.Told(); head != "Violated" || head+": "+body != want {
		t.Fatalf("told %q, %q", head, body)
	}
	r := NewReport(v, nil, 3*time.Second)
	if r.Exit != ExitViolation || r.Outcome != OutcomeViolated || len(r.Violations) != 1 || r.Violations[0].Property != "releases-own" {
		t.Fatalf("report %+v", r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Outcome    string            `json:"outcome"`
		Rules      bool              `json:"rules"`
		Violations []json.RawMessage `json:"violations"`
		Exit       int               `json:"exit"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Outcome != "violated" || !back.Rules || len(back.Violations) != 1 || back.Exit != 1 {
		t.Fatalf("report JSON %s (%v)", b, err)
	}
	var rv Verdict
	if err := json.Unmarshal(b, &rv); err != nil || !rv.Rules || rv.Sentence() != want {
		t.Fatalf("the verdict read back from the report: %q, rules %v (%v)", rv.Sentence(), rv.Rules, err)
	}
	held := Judge(twoOwners(), []Property{sawTwoOwners}, nil)
	held.Rules = true
	if held.Outcome() != OutcomeHeld || NewReport(held, nil, 0).Exit != ExitHeld || NewReport(held, nil, 0).Violations == nil {
		t.Fatalf("a held verdict: outcome %q, report %+v", held.Outcome(), NewReport(held, nil, 0))
	}
	if r := CouldNotRun("lab-05_etcd_lock", errors.New("lab 05 does not compile"), 0); r.Exit != ExitCouldNotRun || r.Outcome != OutcomeCouldNotRun || r.Error == "" {
		t.Fatalf("could not run: %+v", r)
	}
}
