package history

import "time"

// A Report is the last line of a lab run's or an exploration's --json:
// the verdict as data, with what a program needs to act on it without
// reading a sentence: the outcome, the violations (each finding that did
// not hold, with its property, violation, instant, replicas and events),
// the faults file that replays the run, the grid of call sites an
// exploration tried, and the exit code the command ends with.
// `experiment run --lab` and `experiment explore` write the same type.
type Report struct {
	Kind string `json:"kind"` // "verdict"
	VerdictRecord
	// Violations are the verdict's findings that did not hold, in order;
	// empty, not absent, when none.
	Violations []Finding `json:"violations"`
	// FaultsFile is a history file whose faults replay the run (`--faults
	// FILE`): the run's own --record file, or an exploration's smallest
	// failing run. "" when none was written.
	FaultsFile string `json:"faults_file,omitempty"`
	// Sites are an exploration's grid: call sites down, fault kinds
	// across. A single run leaves it empty.
	Sites   []Site  `json:"sites,omitempty"`
	Seconds float64 `json:"seconds"`
	// Error is why the command could not run the code or the run failed
	// (the compiler's message, a build that timed out).
	Error string `json:"error,omitempty"`
	// Exit is the exit code the command ends with: ExitHeld,
	// ExitViolation or ExitCouldNotRun.
	Exit int `json:"exit"`
}

// Exit codes of the commands that run a learner's lab code (`experiment
// run --lab`, `experiment explore`).
const (
	ExitHeld        = 0 // the code held every rule (every explored fault)
	ExitViolation   = 1 // the run found a violation, which the report names
	ExitCouldNotRun = 2 // bad usage, the lab not written yet, a build that failed or timed out
)

// OutcomeCouldNotRun is a Report's outcome when no run took place.
const OutcomeCouldNotRun = "could-not-run"

// NewReport is the report of a run that ended with verdict v (runErr:
// the error it ended with) after took: its exit code is ExitViolation
// when the verdict did not hold or the run failed.
func NewReport(v Verdict, runErr error, took time.Duration) Report {
	r := Report{Kind: "verdict", VerdictRecord: v.Record(), Violations: v.Violations(), Seconds: took.Seconds()}
	if r.Violations == nil {
		r.Violations = []Finding{}
	}
	if runErr != nil {
		r.Error = runErr.Error()
	}
	if !v.Showed || runErr != nil {
		r.Exit = ExitViolation
	}
	return r
}

// CouldNotRun is the report of a command that ran nothing: why (err: the
// compiler's message, a timeout, the stub not written) and after how
// long. Its exit code is ExitCouldNotRun.
func CouldNotRun(scenario string, err error, took time.Duration) Report {
	return Report{Kind: "verdict", VerdictRecord: VerdictRecord{Scenario: scenario, Outcome: OutcomeCouldNotRun, Summary: "Could not run: " + err.Error()},
		Violations: []Finding{}, Seconds: took.Seconds(), Error: err.Error(), Exit: ExitCouldNotRun}
}

// A Site is one row of an exploration's grid: a call site of the
// learner's code (the source line that issued a request, and the RPC)
// as one role reached it, with what each fault kind tried there found.
type Site struct {
	Role  string `json:"role,omitempty"` // owner, waiter, newcomer
	Where string `json:"where"`          // "labs/05_etcd_lock/lock.go:42"
	RPC   string `json:"rpc"`            // Txn, Put, Range, DeleteRange, Watch, LeaseGrant...
	Cells []Cell `json:"cells"`
}

// A Cell is one fault kind tried at one site.
type Cell struct {
	Fault string `json:"fault"` // the fault kind ("fail-before-send", "lose-answer"...)
	// Result is CellHeld, CellViolated, CellBothFailed or CellNotReached.
	Result string `json:"result"`
	// Property and Violation name what broke, when it did.
	Property  string `json:"property,omitempty"`
	Violation string `json:"violation,omitempty"`
}

// The results of a Cell.
const (
	CellHeld       = "held"        // the learner's code held under the fault
	CellViolated   = "violated"    // it broke a rule the reference held on the same faults
	CellBothFailed = "both-failed" // the reference broke it too: a limit of the protocol or the runner
	CellNotReached = "not-reached" // the run never reached the site with this fault
)
