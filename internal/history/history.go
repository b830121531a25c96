package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ownership-election/playground/internal/sanitize"
)

// A History is the record of one run, and the only thing the checker, the
// timeline and a replay read. It holds:
//
//   - the run's identity: the scenario, its parameters (seed included) and
//     the cluster timing the run worked with;
//   - Events, in the order they were recorded, which is also the order of
//     their At. Four sorts share the one list, told apart by Kind:
//     replica events (Acquired, LeaseGranted, Released, WriteAccepted...)
//     that carry Facts: what the replica sent and what etcd or the
//     protected resource answered; faults (IsFault: Paused, Crashed,
//     Partitioned, MemberStopped...) with their Origin, the script's or
//     the learner's; KeyChanged events, one per key a watch on the
//     run's prefix saw change, so what etcd held at every revision can be
//     rebuilt (HoldsAt); and the script's own Phase, Note, Measured
//     and Waiting lines;
//   - the Verdict, once the run is over (nil while it runs).
//
// Every Event has Step, the number of the Phase it happened in (0 before
// the first), which is what a fault schedule is anchored to: a learner's
// key pressed 2.5 s into step 3 is replayed 2.5 s into step 3.
//
// A running experiment.Run exposes its history as it grows: Events(since)
// returns the entries from index since on (an index into Events, stable
// for the run's life), Updated signals that new ones exist, and History
// returns a copy of the whole thing. A screen keeps the index it has read up to,
// waits on Updated (or ticks) and asks for the rest. Only the Run writes
// to its history; everything handed out is a copy.
//
// What a history shows is the checker's: Judge gives the verdict (the
// scenario's Properties over the findings), Parts and Find the findings
// themselves (terms of ownership, two owners at once against etcd's
// holder, stale writes, gaps, lease extensions, figures) per part of the
// run, which is what a timeline marks. A scenario's Predict question is
// judged against a history too (experiment.Question.Judge); with
// experiment.Env.Prediction the run records the learner's pick in
// Prediction, judged.
//
// Write and Read keep a history in a file (JSON, one document);
// experiment.Env.HistoryDir makes a run save its own when it ends.
// `playground experiment replay FILE` prints one again and judges it anew
// without etcd (experiment.Replay), and
// `experiment run NAME --faults FILE` runs its fault schedule on a fresh
// etcd.
type History struct {
	// Format is the version of the file layout (HistoryFormat).
	Format   int    `json:"format"`
	Scenario string `json:"scenario"`
	// Params are the run's parameters after the scenario's defaults were
	// applied: Seed is the seed the run's random choices came from.
	Params Params `json:"params"`
	// Timing is what the cluster was found to do when the run began.
	Timing  Timing    `json:"timing"`
	Started time.Time `json:"started"`
	Events  []Event   `json:"events"`
	// Verdict is the checker's, set when the run ends; Error is the
	// error the run ended with, if any.
	Verdict *Verdict `json:"verdict,omitempty"`
	Error   string   `json:"error,omitempty"`
	// AsLearner: the run was the scenario's RunAsLearner version (a
	// class cluster), whose verdict is its script's.
	AsLearner bool `json:"as_learner,omitempty"`
	// Prediction is what the learner predicted before the run, if the
	// screen asked (the engine never sets it).
	Prediction *Prediction `json:"prediction,omitempty"`
}

// HistoryFormat is the History.Format this package writes and reads.
const HistoryFormat = 1

// Prediction is the learner's answer to a scenario's predict question,
// kept beside what the checker found.
type Prediction struct {
	Question string `json:"question"`
	Picked   string `json:"picked"`
	Correct  bool   `json:"correct"`
	// Unjudged, when set, says why the run could not judge the pick
	// (the story the question is about did not happen: a fault of the
	// learner's changed it); Correct is false then and means nothing.
	Unjudged string `json:"unjudged,omitempty"`
}

// Timing is the cluster's timing as the run read it: what a scenario
// scales its waits by on a cluster it did not start.
type Timing struct {
	// AskedTTL is the TTL the scenario asked for; GrantedTTL what etcd
	// granted for it (more when AskedTTL is under etcd's minimum).
	AskedTTL   int64 `json:"asked_ttl"`
	GrantedTTL int64 `json:"granted_ttl"`
	// MinTTL is the TTL etcd grants when asked for 1 s: its minimum,
	// ceil(1.5 election timeouts).
	MinTTL int64 `json:"min_ttl"`
	// Election is how long a leader change may take on this cluster: an
	// election timeout, read from the minimum TTL (at most 2/3 of it).
	Election time.Duration `json:"election_ns"`
}

// Origin says who injected a fault.
type Origin string

// The origins of a fault.
const (
	ByScript  Origin = "script"  // the scenario's own step
	ByLearner Origin = "learner" // a key the learner pressed (or a replayed schedule)
)

// Facts are what a replica sent and what etcd or the protected resource
// answered, as the client saw them. Fields a call does not have stay zero.
type Facts struct {
	// Op is the request: "grant", "keepalive", "timetolive", "revoke",
	// "txn", "put", "get", "delete", "watch" (a watch event), "write"
	// (to the protected resource), or OpNewResource and OpFencing (the
	// resource replaced or switched; see ResourceState.After).
	Op  string `json:"op"`
	Key string `json:"key,omitempty"` // relative to the run's prefix
	// If is a Txn's comparison in words ("create_revision(lock) = 0").
	If string `json:"if,omitempty"`
	// Revision is the revision of etcd's answer (its header).
	Revision int64 `json:"rev,omitempty"`
	// Succeeded: a Txn's comparison held; a write was accepted; any
	// other call was answered without an error.
	Succeeded bool `json:"ok"`
	// Deleted is how many keys a delete removed, and Prev what they held
	// (WithPrevKV): whose lock a delete took away.
	Deleted int64      `json:"deleted,omitempty"`
	Prev    []StoreKey `json:"prev,omitempty"`
	// Held is the key as the answer showed it, when it did (a read, the
	// Else branch of a failed Txn, a put's new version).
	Held *StoreKey `json:"held,omitempty"`
	// Lease is the lease the call is about; GrantedTTL the TTL etcd
	// granted or renewed it with; TTLLeft what TimeToLive said is left
	// (whole seconds rounded down, -1 when etcd no longer knows it).
	Lease      int64 `json:"lease,omitempty"`
	GrantedTTL int64 `json:"granted_ttl,omitempty"`
	TTLLeft    int64 `json:"ttl_left,omitempty"`
	// Token is the fencing token a write carried; Highest the highest
	// the resource had accepted before it.
	Token   int64 `json:"token,omitempty"`
	Highest int64 `json:"highest,omitempty"`
	// RaftTerm and Leader are an etcd member's answer to Status (Op
	// "status"): the raft term of the entries it has applied, and the
	// member it follows as leader ("" when it knows none).
	RaftTerm uint64 `json:"raft_term,omitempty"`
	Leader   string `json:"leader,omitempty"`
	// Err is the error the call ended with ("" if none); for a call
	// answered on a later try, the error the try before met.
	Err string `json:"err,omitempty"`
	// Tries is how many times the request was sent: more than one when
	// it met a leader change, a member that went away, or no answer.
	Tries int `json:"tries,omitempty"`
	// Overdue is how long after the replica's own deadline for the lease
	// (its last answered renewal + TTL) etcd answered the keep-alive, in
	// seconds; 0 when it answered in time.
	Overdue float64 `json:"overdue_s,omitempty"`
	// Resolved is what reads found after writes whose answer was lost
	// (see Resolution), in order: whether each had been applied.
	Resolved []Resolution `json:"resolved,omitempty"`
	// Request is the request fault a note arms (Op OpArmed), or a fault
	// event fired, or the call site a note says was reached (OpReached).
	Request *RequestFault `json:"request,omitempty"`
	// Changed are the revisions at which the requests behind the event
	// (a lab's code's, within one call of it) changed etcd, by etcd's own
	// answers: a put or a delete, in a Txn's branch or not. The key watch
	// says what changed at each; this says who changed it (Clobbers).
	Changed []int64 `json:"changed,omitempty"`
}

// IsFault reports whether k is a fault: something done to a replica or
// to etcd rather than by it.
func (k Kind) IsFault() bool {
	switch k {
	case Paused, Resumed, Crashed, Restarted, Partitioned, Healed, ClockChanged,
		Stalled, MemberStopped, MemberRestarted, LeaderMoved,
		RequestFailed, AnswerLost, RequestHeld, RequestsRefused, LeaseRevoked:
		return true
	}
	return false
}

// IsEtcdFault: a fault done to etcd itself (its Replica names a member).
func (k Kind) IsEtcdFault() bool {
	return k == MemberStopped || k == MemberRestarted || k == LeaderMoved
}

// Faults returns the history's faults, the script's and the learner's.
func (h *History) Faults() []Event {
	var out []Event
	for _, e := range h.Events {
		if e.Kind.IsFault() {
			out = append(out, e)
		}
	}
	return out
}

// ScheduledFault is one learner fault of a schedule: Kind done to Replica
// After into step Step (Value: a clock rate).
type ScheduledFault struct {
	Step    int           `json:"step"`
	After   time.Duration `json:"after_ns"`
	Kind    Kind          `json:"kind"`
	Replica string        `json:"replica"`
	Value   float64       `json:"value,omitempty"`
	// Role is the part Replica played when the fault hit it ("owner",
	// "waiter"), where the recording knew it: a replay on other code
	// (the reference beside the learner's) aims the fault at the replica
	// in that role there, not at the same name.
	Role string `json:"role,omitempty"`
	// Request is a request fault (a lab run's), armed when the run
	// starts rather than at Step and After.
	Request *RequestFault `json:"request,omitempty"`
}

// FaultSchedule is the learner's faults, each anchored to the step it
// came in: what `experiment run --faults` injects again.
func (h *History) FaultSchedule() []ScheduledFault {
	stepAt := map[int]time.Duration{}
	var out []ScheduledFault
	for _, e := range h.Events {
		if e.Kind == Phase {
			stepAt[e.Step] = e.At
		}
		if e.Kind.IsFault() && e.Origin == ByLearner {
			out = append(out, ScheduledFault{Step: e.Step, After: e.At - stepAt[e.Step], Kind: e.Kind, Replica: e.Replica, Value: e.Value})
		}
	}
	return out
}

// HoldsAt is what etcd held under the run's prefix after the first n
// events, by the KeyChanged events among them: the key's state at the
// highest revision the watch had reported by then.
func (h *History) HoldsAt(n int) map[string]StoreKey {
	held := map[string]StoreKey{}
	for _, e := range h.Events[:min(n, len(h.Events))] {
		if e.Kind != KeyChanged || e.Facts == nil || e.Facts.Held == nil {
			continue
		}
		if e.Facts.Op == "delete" {
			delete(held, e.Facts.Key)
		} else {
			held[e.Facts.Key] = *e.Facts.Held
		}
	}
	return held
}

// Write writes h as one JSON document.
func Write(w io.Writer, h History) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// ErrHistoryFormat: the file is a history of a layout this build cannot read.
var ErrHistoryFormat = errors.New("history: unknown format")

// Read reads what Write wrote: a history of this build's format, under
// its scenario's current name. Whether the scenario exists is the
// caller's to check (the catalog is above this package).
//
// A history file may come from anywhere (a classmate, a bug report), so
// Read holds it to the limits in limits.go: a file larger than
// MaxFileBytes is refused before a byte is decoded when r can say its
// size, and as soon as that much was read otherwise; the events are
// decoded one at a time, so memory follows what the file holds, not its
// size. Every string read is cleaned of escape sequences and control
// characters (internal/sanitize) before anything can print it.
func Read(r io.Reader) (History, error) {
	if err := checkSize(r); err != nil {
		return History{}, err
	}
	in := &cappedReader{r: r, left: MaxFileBytes + 1}
	h, err := decodeHistory(json.NewDecoder(in))
	if in.over {
		return History{}, tooLarge(0)
	}
	if err != nil {
		return History{}, fmt.Errorf("read history: %w", err)
	}
	if h.Format != HistoryFormat {
		return History{}, fmt.Errorf("%w %d (this build reads %d)", ErrHistoryFormat, h.Format, HistoryFormat)
	}
	sanitize.Strings(&h)
	// A history recorded before its scenario was renamed reads as a run
	// of the scenario under its current name.
	h.Scenario = CurrentName(h.Scenario)
	if h.Verdict != nil {
		h.Verdict.Scenario = CurrentName(h.Verdict.Scenario)
	}
	return h, nil
}

// Resolution is what a replica found out, by reading, about a write whose
// answer it did not get.
type Resolution struct {
	Err      string    `json:"err"`            // what the write met
	Revision int64     `json:"rev,omitempty"`  // the revision of the read
	Held     *StoreKey `json:"held,omitempty"` // the key as read; nil: absent
	// Applied: the key as read shows the write applied (it holds the
	// writer's own value and lease).
	Applied bool `json:"applied"`
}

// StoreKey is one key of the run as etcd holds it.
type StoreKey struct {
	Key            string `json:"key"` // relative to the run's prefix
	Value          string `json:"value"`
	CreateRevision int64  `json:"create_rev"`
	ModRevision    int64  `json:"mod_rev"`
	Version        int64  `json:"version"`
	Lease          int64  `json:"lease,omitempty"` // lease ID, 0 for a key without one
}
