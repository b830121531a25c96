// Package history is what a run leaves behind and how it is judged: the
// events replicas, etcd and the resource reported, history files, the
// checker's findings and verdicts, and the old names of renamed
// scenarios. It knows nothing of etcd or terminals, so progress, the
// screens and replays read it without linking either.
package history

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// Kind is the type of an Event.
type Kind string

// The event kinds.
const (
	Phase             Kind = "phase"              // the script moves on to a new step
	LeaseGranted      Kind = "lease-granted"      // a replica got a lease
	LeaseRenewed      Kind = "lease-renewed"      // a keep-alive was answered
	LeaseExpired      Kind = "lease-expired"      // a replica learned its lease is gone
	Acquired          Kind = "acquired"           // a replica became owner (Token set)
	Lost              Kind = "lost"               // a replica noticed it is no longer owner
	SteppedDown       Kind = "stepped-down"       // a replica stopped acting as owner
	Released          Kind = "released"           // an owner unlocked or resigned
	Paused            Kind = "paused"             // work and network frozen
	Resumed           Kind = "resumed"            // ... and thawed
	Crashed           Kind = "crashed"            // client closed, session orphaned
	Restarted         Kind = "restarted"          // a crashed replica came back
	Partitioned       Kind = "partitioned"        // network dropped, work continues
	Healed            Kind = "healed"             // network back
	ClockChanged      Kind = "clock"              // a replica's local clock rate changed
	WriteAccepted     Kind = "write-accepted"     // the protected resource took a write
	WriteRejected     Kind = "write-rejected"     // ... or refused it (stale token)
	LeaderObserved    Kind = "leader-observed"    // an observer saw a (raft or election) leader
	ShardClaimed      Kind = "shard-claimed"      // a worker took a shard (Text names it)
	InvariantViolated Kind = "invariant-violated" // two owners at once, or a stale write accepted
	Measured          Kind = "measured"           // a number the scenario measured (Value, Unit)
	Note              Kind = "note"               // anything else worth a line
	Waiting           Kind = "waiting"            // the script cannot go on until a replica held down is let go
	PartBegins        Kind = "part"               // a named part of the run begins (a variant); Text is its name
	KeyChanged        Kind = "etcd"               // the run's watch saw a key put or deleted (Facts)
	Stalled           Kind = "stalled"            // a replica's network froze for a while (Value: seconds), work going on
	MemberStopped     Kind = "member-stopped"     // an etcd member was stopped (Replica: the member)
	MemberRestarted   Kind = "member-restarted"   // ... and started again
	LeaderMoved       Kind = "leader-moved"       // raft leadership was moved to another member
	Finished          Kind = "verdict"            // the last event: the verdict
)

// Event is one thing that happened during a run (see History). At is the
// time since the run started; Text is made from the event's Facts where
// it has them, never from what the script expected.
type Event struct {
	At      time.Duration
	Kind    Kind
	Replica string  // the replica (or etcd member) it is about, if any
	Token   int64   // fencing token (lock key CreateRevision), if any
	TTL     int64   // lease TTL in seconds, if any
	Value   float64 // a measured number (Measured), a clock rate, or 0
	Unit    string  // the unit of Value ("s", "ms", "wake-ups")
	Text    string  // human-readable description
	// Step is the number of the Phase the event happened in (0 before
	// the first Phase).
	Step int
	// Origin says who injected a fault (Kind.IsFault), "" otherwise.
	Origin Origin
	// Facts are the request and etcd's (or the resource's) answer behind
	// the event, nil for events that are not about a call.
	Facts *Facts
	// Figure names a Measured number the verdict keeps ("gap_ttl1_s").
	Figure string
}

type jsonEvent struct {
	T       float64 `json:"t"`
	Kind    Kind    `json:"kind"`
	Replica string  `json:"replica,omitempty"`
	Token   int64   `json:"token,omitempty"`
	TTL     int64   `json:"ttl,omitempty"`
	Value   float64 `json:"value,omitempty"`
	Unit    string  `json:"unit,omitempty"`
	Text    string  `json:"text"`
	Step    int     `json:"step,omitempty"`
	Origin  Origin  `json:"origin,omitempty"`
	Facts   *Facts  `json:"facts,omitempty"`
	Figure  string  `json:"figure,omitempty"`
	// NS is At in nanoseconds, so a history read back orders and
	// anchors its events exactly as they were recorded.
	NS int64 `json:"ns,omitempty"`
}

// MarshalJSON writes the event with its time in seconds ("t": 1.234)
// and, exactly, in nanoseconds ("ns").
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonEvent{
		T: float64(e.At.Milliseconds()) / 1000, Kind: e.Kind, Replica: e.Replica,
		Token: e.Token, TTL: e.TTL, Value: e.Value, Unit: e.Unit, Text: e.Text,
		Step: e.Step, Origin: e.Origin, Facts: e.Facts, Figure: e.Figure, NS: int64(e.At),
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j jsonEvent
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("read event: %w", err)
	}
	at := time.Duration(j.NS)
	if j.NS == 0 {
		at = time.Duration(math.Round(j.T*1000)) * time.Millisecond
	}
	*e = Event{At: at, Kind: j.Kind, Replica: j.Replica, Token: j.Token, TTL: j.TTL, Value: j.Value,
		Unit: j.Unit, Text: j.Text, Step: j.Step, Origin: j.Origin, Facts: j.Facts, Figure: j.Figure}
	return nil
}

// String formats the event as one line of text: "  1.234s  acquired  r1  token 42: ...".
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%7.3fs  %-18s", e.At.Seconds(), e.Kind)
	if e.Replica != "" {
		fmt.Fprintf(&b, " %-4s", e.Replica)
	}
	b.WriteString(" ")
	b.WriteString(e.Text)
	return strings.TrimRight(b.String(), " ")
}

// TTLLabel is how the course writes a lease's granted TTL, in the events,
// the verdicts and on the screen: "TTL 5s".
func TTLLabel(seconds int64) string { return fmt.Sprintf("TTL %ds", seconds) }

// LeftLabel is how it writes the time a lease has left: "0.6s left",
// tenths under 10 s and whole seconds above.
func LeftLabel(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs left", d.Seconds())
	}
	return fmt.Sprintf("%ds left", int64(d/time.Second))
}
