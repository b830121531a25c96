package history

import (
	"fmt"
	"time"
)

// Request-level faults: a fault aimed at one request of the learner's
// code (a lab run's), rather than at a moment. The replica harness puts
// gRPC interceptors on the client it hands the learner's code; each
// request is known by its call site (the learner's source line that
// issued it, and the RPC), and a RequestFault says which request to hit
// and how. They are armed when a run starts (a Note whose Facts.Op is
// OpArmed and Facts.Request the fault), and each one that fires is an
// event of its kind with the same Facts.Request, so a history says both
// what was aimed and what was hit, and replays (--faults) by what was
// aimed.

// The request faults' own event kinds (the other three are Paused,
// Partitioned and LeaderMoved, with Facts.Request set).
const (
	RequestFailed Kind = "request-failed" // failed before it was sent
	AnswerLost    Kind = "answer-lost"    // etcd applied it; the client was told it failed
	RequestHeld   Kind = "request-held"   // held, then sent late
	// RequestsRefused: etcd refuses the replica's writes for a while,
	// from this request on; LeaseRevoked: the replica's lease was ended
	// at etcd (Facts: etcd's answer to the revoke) while its process
	// runs on.
	RequestsRefused Kind = "requests-refused"
	LeaseRevoked    Kind = "lease-revoked"
)

// OpArmed is the Facts.Op of the note that arms a request fault, and
// OpReached of the note that says a replica first reached a call site.
// OpRefusal is the note a replica sends when a refusal (RefuseWrites)
// ends: Facts.Tries is how many of its lab code's writes were refused
// meanwhile (those its own program made on a clock of its own left
// out), Value how long the refusal lasted, in seconds.
const (
	OpArmed   = "arm"
	OpReached = "reached"
	OpRefusal = "refusal"
)

// FaultAt is what a request fault does to the request it hits.
type FaultAt string

// The request fault kinds, in the order exploration tries them.
const (
	FailBefore  FaultAt = "fail"   // fail it before it is sent
	LoseAnswer  FaultAt = "lose"   // let etcd apply it, lose the answer
	HoldRequest FaultAt = "hold"   // hold it, then send it late
	PauseAfter  FaultAt = "pause"  // stop the replica's process right after the answer, past the TTL
	CutAfter    FaultAt = "cut"    // cut the replica's network right after the answer
	LeaderAfter FaultAt = "leader" // move etcd's raft leader right after the answer (3-member cluster)
	// SeverAfter cuts the replica's network right after the answer and
	// keeps it cut through the run's stop: the replica is told to stop
	// while cut off, and must return all the same.
	SeverAfter FaultAt = "sever"
	// StopAfter tells the replica to stop (SIGTERM: its Run's context
	// ends) right after the answer, mid-run, while the others go on.
	StopAfter FaultAt = "stop"
	// RefuseWrites: from this request on, for a while, etcd refuses the
	// replica's writes at once ("etcdserver: too many requests").
	RefuseWrites FaultAt = "refuse"
	// RevokeLease: the replica's lease ends at etcd as this request
	// leaves, which reaches etcd late; at a stream, right after the
	// answer. The replica's process runs on.
	RevokeLease FaultAt = "revoke"
)

// FaultKinds lists the request fault kinds, in the grid's order.
func FaultKinds() []FaultAt {
	return []FaultAt{FailBefore, LoseAnswer, HoldRequest, PauseAfter, CutAfter, LeaderAfter, SeverAfter, StopAfter, RefuseWrites, RevokeLease}
}

// CallSite is a call site: the learner's source line that issued a request
// (the first frame in the lab's folder: File, Line, the function Func)
// and the RPC it sent ("Txn", "Range", "Put", "DeleteRange",
// "LeaseGrant", "LeaseRevoke"...), or the stream it opened ("Watch",
// "LeaseKeepAlive").
type CallSite struct {
	File string `json:"file"` // relative to the checkout: "labs/05_etcd_lock/etcdlock.go"
	Line int    `json:"line"`
	Func string `json:"func"` // "Acquire", "(*Lock).Release"
	// Entry is the outermost function in the lab's folder on the stack:
	// the lab's API that the replica program called ("Acquire"), which
	// matches a learner's site with the reference's.
	Entry string `json:"entry,omitempty"`
	RPC   string `json:"rpc"`
}

// String is how the course writes a call site: "etcdlock.go:42 Txn (Acquire)".
func (s CallSite) String() string {
	return fmt.Sprintf("%s:%d %s (%s)", baseName(s.File), s.Line, s.RPC, s.Func)
}

// Stream says whether the site opens a stream (a Watch or a
// LeaseKeepAlive), whose faults hit its first answer rather than a
// request.
func (s CallSite) Stream() bool { return s.RPC == "Watch" || s.RPC == "LeaseKeepAlive" }

// Key is the site's identity: its file, line and RPC.
func (s CallSite) Key() string { return fmt.Sprintf("%s:%d %s", s.File, s.Line, s.RPC) }

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// RequestFault is one fault at a request: Fault done to the Occurrence-th
// request (from 1) from Site by the replica named Replica, or, with
// Replica "", by whichever replica first reaches that many requests from
// the site while in Role ("owner": it believes it holds the lock or
// leads; "waiter": it does not; "newcomer": it joined the run late and
// has not owned yet). ID tells a run's faults apart. At a stream's site
// the fault hits the Occurrence-th stream opened there, at its first
// answer (fail: as it opens).
type RequestFault struct {
	ID         int      `json:"id"`
	Fault      FaultAt  `json:"fault"`
	Role       string   `json:"role,omitempty"`
	Replica    string   `json:"replica,omitempty"`
	Site       CallSite `json:"site"`
	Occurrence int      `json:"n"`
	// Role and Replica of the request it hit, on a fault that fired.
	HitRole    string `json:"hit_role,omitempty"`
	HitReplica string `json:"hit_replica,omitempty"`
	// For, on a fault that fired, how long it held the request or the
	// replica down.
	For time.Duration `json:"for_ns,omitempty"`
}

// Target says whom the fault aims at: "r2" or "the owner".
func (f RequestFault) Target() string {
	if f.Replica != "" {
		return f.Replica
	}
	return "the " + f.Role
}

// String says the fault in a line: "lose the answer to the owner's 1st
// etcdlock.go:42 Txn (Acquire)".
func (f RequestFault) String() string {
	what := map[FaultAt]string{FailBefore: "fail before sending", LoseAnswer: "lose the answer to",
		HoldRequest: "hold and send late", PauseAfter: "pause the replica after", CutAfter: "cut the network after",
		LeaderAfter: "move etcd's leader after", SeverAfter: "cut the network through its stop, after",
		StopAfter: "tell the replica to stop after", RefuseWrites: "refuse writes for a while, beginning with",
		RevokeLease: "end the lease at etcd, then send late"}[f.Fault]
	noun := "request"
	if f.Site.Stream() {
		// A stream's fail and hold hit its opening (in the role it was
		// opened in); the other kinds, and those two in a role the
		// replica took later, hit its n-th answer in the role.
		what = map[FaultAt]string{FailBefore: "fail", LoseAnswer: "drop", HoldRequest: "open late",
			PauseAfter: "pause the replica at", CutAfter: "cut the network at", LeaderAfter: "move etcd's leader at",
			SeverAfter: "cut the network through its stop, at", StopAfter: "tell the replica to stop at",
			RefuseWrites: "refuse writes for a while, beginning at", RevokeLease: "end the lease at etcd at"}[f.Fault]
		noun = "answer on the stream"
		if f.Fault == FailBefore || f.Fault == HoldRequest {
			noun = "stream"
		}
	}
	if what == "" {
		what = string(f.Fault)
	}
	who := f.Target()
	if f.Replica == "" {
		who = "the " + f.Role + "'s"
	} else {
		who += "'s"
	}
	return fmt.Sprintf("%s %s %s %s from %s", what, who, ordinal(f.Occurrence), noun, f.Site)
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// Divergence is where a learner's run and the reference's, on the same
// faults, first differ, as explore's report carries it: the step (from
// 1, the runs' compared steps matched by role), the learner's event
// there (its time, replica and kind: the lab screen marks it on that
// run's timeline), and each side in a line.
type Divergence struct {
	Step      int           `json:"step"`
	At        time.Duration `json:"at_ns"`
	Replica   string        `json:"replica,omitempty"`
	Kind      Kind          `json:"kind,omitempty"`
	Yours     string        `json:"yours"`
	Reference string        `json:"reference"`
}
