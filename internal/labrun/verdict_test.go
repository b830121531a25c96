package labrun

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// The checkers of labs 05 and 06 on hand-written histories: each names
// what it exists to name, and judges by revision, whichever of a
// replica's report and etcd's watch came first.

// lockPut is the watch's put of key at rev: value, the revision the key
// was created at and its version.
func lockPut(at int, key, value string, rev, created, version int64) history.Event {
	k := history.StoreKey{Key: key, Value: value, CreateRevision: created, ModRevision: rev, Version: version, Lease: 7}
	return history.Event{At: ms(at), Kind: history.KeyChanged, Facts: &history.Facts{Op: "put", Key: key, Revision: rev, Held: &k, Succeeded: true}}
}

// lockDelete is the watch's delete of key at rev, of a key created at
// created for prev.
func lockDelete(at int, key, prev string, rev, created int64) history.Event {
	p := history.StoreKey{Key: key, Value: prev, CreateRevision: created, ModRevision: created, Version: 1, Lease: 7}
	k := history.StoreKey{Key: key, ModRevision: rev}
	return history.Event{At: ms(at), Kind: history.KeyChanged, Facts: &history.Facts{Op: "delete", Key: key, Revision: rev, Deleted: 1, Prev: []history.StoreKey{p}, Held: &k, Succeeded: true}}
}

// took is a replica's report that the lab's Acquire returned token, its
// requests having written at rev.
func took(at int, who string, token, rev int64) history.Event {
	return history.Event{At: ms(at), Kind: history.Acquired, Replica: who, Token: token, Facts: &history.Facts{Op: "acquire", Key: lab05Key, Revision: rev, Succeeded: true}}
}

// let is a replica's report of what the lab's Release did.
func let(at int, who string, token, rev int64) history.Event {
	return history.Event{At: ms(at), Kind: history.Note, Replica: who, Token: token, Facts: &history.Facts{Op: "release", Key: lab05Key, Revision: rev, Succeeded: true}}
}

// judged is what check found in events: whether it held, and its
// sentence.
func judged(t *testing.T, check func(*history.Findings) history.Finding, ttl int64, events ...history.Event) (bool, string) {
	t.Helper()
	h := history.History{Scenario: "lab-05_etcd_lock", Params: history.Params{TTL: ttl}, Events: events}
	return said(check(history.Find(&h, "")))
}

// said is a finding as the rules' tests read it: whether it held, and
// its sentence.
func said(f history.Finding) (bool, string) { return f.Held, f.Text }

func wantNamed(t *testing.T, ok bool, say, name string) {
	t.Helper()
	if ok || !(strings.HasPrefix(say, name+" at ") || strings.HasPrefix(say, name+": ")) {
		t.Fatalf("want %s named, got %v: %s", name, ok, say)
	}
}

func wantHeld(t *testing.T, ok bool, say string) {
	t.Helper()
	if !ok {
		t.Fatalf("want it to hold: %s", say)
	}
}

func TestLab05OneHolder(t *testing.T) {
	// The replica's report first, etcd's watch after: the same verdict.
	ok, say := judged(t, lab05OneHolder, 2, took(10, "r1", 5, 5), lockPut(11, lab05Key, "r1", 5, 5, 1))
	wantHeld(t, ok, say)
	ok, say = judged(t, lab05OneHolder, 2,
		lockPut(10, lab05Key, "r1", 5, 5, 1), took(11, "r1", 5, 5),
		took(20, "r2", 6, 6), lockPut(21, lab05Key, "r2", 6, 5, 2))
	wantNamed(t, ok, say, "two-holders")
	if !strings.Contains(say, "r2's Acquire") || !strings.Contains(say, "for r1") {
		t.Fatalf("the holders are not named: %s", say)
	}
	ok, say = judged(t, lab05OneHolder, 2, lockPut(10, lab05Key, "r1", 5, 5, 1), took(11, "r1", 4027522306252637450, 5))
	wantNamed(t, ok, say, "wrong-token")
	ok, say = judged(t, lab05OneHolder, 2, took(11, "r1", 5, 0))
	wantNamed(t, ok, say, "took-without-write")
}

func TestLab05ReleasesOwn(t *testing.T) {
	base := []history.Event{
		lockPut(10, lab05Key, "r1", 2, 2, 1), took(11, "r1", 2, 2),
		lockDelete(20, lab05Key, "r1", 3, 2),
		lockPut(30, lab05Key, "r2", 4, 4, 1), took(31, "r2", 4, 4),
	}
	ok, say := judged(t, lab05ReleasesOwn, 2, append(base, let(40, "r2", 4, 5), lockDelete(41, lab05Key, "r2", 5, 4))...)
	wantHeld(t, ok, say)
	// r1, woken late, releases: its requests deleted r2's lock.
	ok, say = judged(t, lab05ReleasesOwn, 2, append(base, let(40, "r1", 2, 5), lockDelete(41, lab05Key, "r2", 5, 4))...)
	wantNamed(t, ok, say, "released-another")

	// The neighbour's lock, put before the replicas started, stays.
	neighbour := append([]history.Event{lockPut(1, lab05Neighbour, "another application", 1, 1, 1)}, base...)
	ok, say = judged(t, lab05ReleasesOwn, 2, append(slices.Clone(neighbour), let(40, "r2", 4, 5), lockDelete(41, lab05Key, "r2", 5, 4))...)
	wantHeld(t, ok, say)
	// r2's Release deletes by prefix: its own lock and the neighbour's.
	ok, say = judged(t, lab05ReleasesOwn, 2, append(slices.Clone(neighbour), let(40, "r2", 4, 5),
		lockDelete(41, lab05Key, "r2", 5, 4), lockDelete(41, lab05Neighbour, "another application", 5, 1))...)
	wantNamed(t, ok, say, "released-neighbour")
	if !strings.Contains(say, "r2's release deleted "+lab05Neighbour+" at revision 5") {
		t.Fatalf("the sentence should name who deleted what: %s", say)
	}
}

func TestLab05FreedAfterCrash(t *testing.T) {
	held := []history.Event{lockPut(10, lab05Key, "r1", 2, 2, 1), took(11, "r1", 2, 2), ev(1000, history.Crashed, "r1")}
	ok, say := judged(t, lab05FreedAfterCrash, 2, append(held, lockDelete(3500, lab05Key, "r1", 3, 2), ev(12000, history.Note, ""))...)
	wantHeld(t, ok, say)
	ok, say = judged(t, lab05FreedAfterCrash, 2, append(held, ev(12000, history.Note, ""))...)
	wantNamed(t, ok, say, "not-freed")
	// A run that ended within the bound says nothing yet.
	ok, say = judged(t, lab05FreedAfterCrash, 2, append(held, ev(3000, history.Note, ""))...)
	wantHeld(t, ok, say)
}

// data is the watch's put of lab 06's value, as a replica writes it.
func data(at int, value string, rev int64) history.Event {
	return lockPut(at, lab06Data, value, rev, 3, rev)
}

func TestLab06NoStaleWrite(t *testing.T) {
	lock := lockPut(10, lab06Lock, "r1", 10, 10, 1)
	ok, say := judged(t, lab06NoStaleWrite, 2, lock, data(20, "r1 token 10 write 1", 11))
	wantHeld(t, ok, say)
	ok, say = judged(t, lab06NoStaleWrite, 2, lock, data(20, "r2 token 8 write 4", 11))
	wantNamed(t, ok, say, "stale-write")
	ok, say = judged(t, lab06NoStaleWrite, 2, lock, lockDelete(15, lab06Lock, "r1", 11, 10), data(20, "r1 token 10 write 2", 12))
	wantNamed(t, ok, say, "stale-write")
	ok, say = judged(t, lab06NoStaleWrite, 2, lock)
	wantNamed(t, ok, say, "no-write")
}

func refused(at int, who string, token, rev int64) history.Event {
	return history.Event{At: ms(at), Kind: history.WriteRejected, Replica: who, Token: token, Facts: &history.Facts{Op: "write", Key: lab06Data, Revision: rev}}
}

func TestLab06OwnerNotRefused(t *testing.T) {
	lock := []history.Event{lockPut(10, lab06Lock, "r1", 10, 10, 1), lockPut(20, lab06Lock, "r1", 12, 10, 2)}
	ok, say := judged(t, lab06OwnerNotRefused, 2, append(lock, refused(30, "r1", 10, 12))...)
	wantNamed(t, ok, say, "owner-refused")
	ok, say = judged(t, lab06OwnerNotRefused, 2, append(lock, lockDelete(25, lab06Lock, "r1", 13, 10), refused(30, "r1", 10, 13))...)
	wantHeld(t, ok, say)
	ok, say = judged(t, lab06OwnerNotRefused, 2, append(lock, refused(30, "r1", 10, 0))...)
	wantNamed(t, ok, say, "refused-unasked")
}

func TestLab06WritesLanded(t *testing.T) {
	claim := history.Event{At: ms(30), Kind: history.WriteAccepted, Replica: "r1", Token: 10, Facts: &history.Facts{Op: "write", Key: lab06Data, Revision: 11, Succeeded: true}}
	ok, say := judged(t, lab06WritesLanded, 2, claim, data(31, "r1 token 10 write 1", 11))
	wantHeld(t, ok, say)
	ok, say = judged(t, lab06WritesLanded, 2, claim, data(31, "r2 token 12 write 1", 11))
	wantNamed(t, ok, say, "phantom-write")
}

// A key left by a crashed process is not the restarted one's to release.
func TestLabLeftBehindIsTheReturnedProcesss(t *testing.T) {
	check := labReleasedOnStop(lab05Key, lab05Returned).Find
	stop := history.Event{At: ms(5000), Kind: history.Phase, Text: labStopPhase}
	back := history.Event{At: ms(5100), Kind: history.Note, Replica: "r1", Text: lab05Returned + " after its context ended"}
	ok, say := judged(t, check, 2, lockPut(10, lab05Key, "r1", 2, 2, 1), stop, back, ev(6000, history.Note, ""))
	wantNamed(t, ok, say, "left-behind")
	ok, say = judged(t, check, 2, lockPut(10, lab05Key, "r1", 2, 2, 1), ev(100, history.Crashed, "r1"), ev(3000, history.Restarted, "r1"), stop, back, ev(6000, history.Note, ""))
	wantHeld(t, ok, say)
}

// TestLabRunsLeaveOwnershipToTheirRules: a lab run's verdict comes from
// its lab's promises (OwnRules), so the live monitor does not flag a
// paused holder that wakes and tries a write as two owners (the engine's
// TestOwnRulesQuietTheMonitor).
func TestLabRunsLeaveOwnershipToTheirRules(t *testing.T) {
	for _, id := range IDs() {
		if !Scenario(id).OwnRules {
			t.Errorf("lab %s's runs are judged by the generic monitor", id)
		}
	}
}

// A lab rule's finding carries what broke, when, who and on what
// events, and the verdict's first violation at an instant is it: what the
// lab screen opens its timeline at and marks, read from the fields.
func TestLabFindingNamesTheViolation(t *testing.T) {
	release := let(40, "r1", 2, 5)
	h := history.History{Scenario: ScenarioName("05_etcd_lock"), Params: history.Params{TTL: 2}, Events: []history.Event{
		lockPut(10, lab05Key, "r1", 2, 2, 1), took(11, "r1", 2, 2),
		lockDelete(20, lab05Key, "r1", 3, 2),
		lockPut(30, lab05Key, "r2", 4, 4, 1), took(31, "r2", 4, 4),
		release, lockDelete(41, lab05Key, "r2", 5, 4),
	}}
	v := Scenario("05_etcd_lock").Judge(&h, nil)
	bad := v.Violations()
	if v.Showed || len(bad) != 1 {
		t.Fatalf("verdict %q, violations %+v", v.Sentence(), bad)
	}
	f := bad[0]
	if f.Property != "releases-own" || f.Violation != "released-another" || !f.Timed || f.At != ms(40) {
		t.Fatalf("finding %+v", f)
	}
	if !slices.Equal(f.Replicas, []string{"r1", "r2"}) || len(f.Events) != 1 || !reflect.DeepEqual(f.Events[0], release) {
		t.Fatalf("who and what: %v, %+v", f.Replicas, f.Events)
	}
	if first, ok := v.TimedViolation(); !ok || first.Violation != "released-another" {
		t.Fatalf("the first violation at an instant: %+v, %v", first, ok)
	}
	if want := "Violated: Released-another at 0.04 s: r1's Release"; !strings.HasPrefix(v.Sentence(), want) {
		t.Fatalf("the sentence %q does not begin %q", v.Sentence(), want)
	}
	for _, f := range v.Findings {
		if f.Property == "" || (f.Held && (f.Violation != "" || f.Timed)) {
			t.Fatalf("finding without a name, or held with a violation: %+v", f)
		}
	}
}

// A rule's finding about the run as a whole has no instant; one about a
// crashed holder is at the bound's end, naming the holder and its crash.
func TestLabFindingInstants(t *testing.T) {
	h := history.History{Params: history.Params{TTL: 2}}
	if f := lab05Turns(history.Find(&h, "")); f.Held || f.Timed || f.Violation != "no-holder" || f.Replicas != nil {
		t.Fatalf("no holder at all: %+v", f)
	}
	crash := ev(1000, history.Crashed, "r1")
	h.Events = []history.Event{lockPut(10, lab05Key, "r1", 2, 2, 1), took(11, "r1", 2, 2), crash, ev(12000, history.Note, "")}
	f := lab05FreedAfterCrash(history.Find(&h, ""))
	if f.Violation != "not-freed" || f.At != crash.At+lab05FreeBound(h.Params) || !slices.Equal(f.Replicas, []string{"r1"}) || len(f.Events) != 1 || f.Events[0].Kind != history.Crashed {
		t.Fatalf("not freed: %+v", f)
	}
}

// Every property a lab run is judged by has a name, one to a part, and
// judges with Check or Find: the name is what a finding is known by.
func TestLabPropertiesAreNamed(t *testing.T) {
	for _, id := range IDs() {
		sc := Scenario(id)
		seen := map[string]bool{}
		for _, p := range sc.Shows {
			if p.Name == "" || seen[p.Part+"/"+p.Name] {
				t.Errorf("%s: property of part %q named %q: unnamed or named twice", sc.Name, p.Part, p.Name)
			}
			seen[p.Part+"/"+p.Name] = true
			if (p.Check == nil) == (p.Find == nil) {
				t.Errorf("%s: property %s has both Check and Find, or neither", sc.Name, p.Name)
			}
		}
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func ev(at int, k history.Kind, who string) history.Event {
	return history.Event{At: ms(at), Kind: k, Replica: who}
}
