package history

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ownership-election/playground/internal/sentence"
)

// Verdicts are data: Judge gives each property a Finding, with the
// instant, the replicas and the events it rests on, and the sentence the
// property wrote from them. The command line, the screens and the JSON
// read the fields; the verdict's sentence is written from the findings by
// one function (Verdict.Sentence), and nothing reads a sentence back.

// Finding is one property judged on one part of a run: whether it held,
// and where the history shows it.
type Finding struct {
	// Property is the property's name (Property.Name): "two-owners",
	// "stale-write-refused", "one-holder".
	Property string
	// Violation is what a rule that tells apart the ways it can break
	// calls the one it found ("released-another", "two-holders"), when
	// it did not hold; its sentence begins with it. "" for a property
	// that held or that gives its failures no name.
	Violation string
	// Part is the part of the run it judged ("" the whole run).
	Part string
	Held bool
	// At is the instant it is about, when Timed: a finding about the
	// whole run ("no replica ever took the lock") has none.
	At    time.Duration
	Timed bool
	// Replicas are the replicas it names, the one that acted first (the
	// one whose act broke the rule, the newer of two owners' acts).
	Replicas []string
	// Events are copies of the events it rests on (the act that made two
	// owners, the write etcd took). Copies, not indexes into the history:
	// a finding means the same beside a history a screen marked (an event
	// inserted), with the run's Finished event appended, or with no
	// history at all (the command line's verdict line, the other run's
	// verdict on the lab screen).
	Events []Event
	// Text is the property's sentence, written from the fields above.
	Text string
}

// Sentence is the finding's sentence as the verdict's sentence has it:
// capitalised, with a full stop.
func (f Finding) Sentence() string { return sentence.Join([]string{f.Text}) }

type jsonFinding struct {
	Property  string   `json:"property"`
	Violation string   `json:"violation,omitempty"`
	Part      string   `json:"part,omitempty"`
	Held      bool     `json:"held"`
	At        *float64 `json:"at"` // seconds; null when the finding has no instant
	Replicas  []string `json:"replicas"`
	Events    []Event  `json:"events"`
	Text      string   `json:"text"`
}

// MarshalJSON writes the finding with its instant in seconds ("at":
// 5.63, null when it has none), and its replicas and events as lists,
// empty rather than absent.
func (f Finding) MarshalJSON() ([]byte, error) {
	j := jsonFinding{Property: f.Property, Violation: f.Violation, Part: f.Part, Held: f.Held,
		Replicas: f.Replicas, Events: f.Events, Text: f.Text}
	if f.Timed {
		s := f.At.Seconds()
		j.At = &s
	}
	if j.Replicas == nil {
		j.Replicas = []string{}
	}
	if j.Events == nil {
		j.Events = []Event{}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; the instant comes back to
// the nanosecond.
func (f *Finding) UnmarshalJSON(b []byte) error {
	var j jsonFinding
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("read finding: %w", err)
	}
	*f = Finding{Property: j.Property, Violation: j.Violation, Part: j.Part, Held: j.Held, Text: j.Text}
	if len(j.Replicas) > 0 {
		f.Replicas = j.Replicas
	}
	if len(j.Events) > 0 {
		f.Events = j.Events
	}
	if j.At != nil {
		f.At, f.Timed = time.Duration(math.Round(*j.At*1e9)), true
	}
	return nil
}

// Verdict is how a run ended: whether the scenario showed what it exists
// to show, the findings that say why, and the figures it measured.
type Verdict struct {
	Scenario string
	Showed   bool
	// Findings are the scenario's properties judged, in the order the
	// scenario states them.
	Findings []Finding
	// RunError is the error the run ended with, when Judge was told of
	// one: the sentence ends with it.
	RunError string
	// Summary is the sentence of a verdict no properties judged: one a
	// script wrote itself (least-privilege as the learner), an unknown
	// scenario's, or one recorded by an earlier version, which kept only
	// its sentence. Sentence writes the others from their findings.
	Summary string
	Figures map[string]float64
	// Rules says the properties are rules code is held to (a lab run:
	// the learner's code as the replicas), not what a scenario exists to
	// show: a finding that did not hold is a violation the run found in
	// the code, and the verdict says "Violated", not "Not shown".
	Rules bool
}

// The outcomes of a verdict (Verdict.Outcome), as --json writes them.
const (
	OutcomeHeld     = "held"      // code held to rules broke none
	OutcomeViolated = "violated"  // code held to rules broke one or more
	OutcomeShown    = "shown"     // a scenario showed what it exists to show
	OutcomeNotShown = "not-shown" // a scenario did not
)

// Outcome names how the verdict ended: held or violated for code held to
// rules (Rules), shown or not-shown for a scenario.
func (v Verdict) Outcome() string {
	switch {
	case v.Rules && v.Showed:
		return OutcomeHeld
	case v.Rules:
		return OutcomeViolated
	case v.Showed:
		return OutcomeShown
	}
	return OutcomeNotShown
}

// Sentence is the verdict in words, written from its findings: what did
// not hold ("Violated: ..." for rules, "Not shown: ..." for a scenario),
// then what did, then the run's error; a verdict without findings has
// its Summary.
func (v Verdict) Sentence() string {
	head, body := v.Told()
	if head == "" {
		return body
	}
	return head + ": " + body
}

// Told is the verdict's sentence in two: its heading ("Violated", "Not
// shown", or "" when everything held) and the rest, for a caller that
// says the outcome in words of its own ("verdict: VIOLATION: " + body).
func (v Verdict) Told() (head, body string) {
	if len(v.Findings) == 0 && v.RunError == "" {
		return "", v.Summary
	}
	var shown, missed []string
	for _, f := range v.Findings {
		if f.Held {
			shown = append(shown, f.Text)
		} else {
			missed = append(missed, f.Text)
		}
	}
	var b strings.Builder
	if len(missed) > 0 {
		head = "Not shown"
		also := " What it did show: "
		if v.Rules {
			head, also = "Violated", " What held: "
		}
		b.WriteString(sentence.Join(missed))
		if len(shown) > 0 {
			b.WriteString(also + sentence.Join(shown))
		}
	} else {
		b.WriteString(sentence.Join(shown))
	}
	if v.RunError != "" {
		fmt.Fprintf(&b, " The run failed: %s.", v.RunError)
	}
	return head, strings.TrimSpace(b.String())
}

// Violations are the findings that did not hold, in order.
func (v Verdict) Violations() []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if !f.Held {
			out = append(out, f)
		}
	}
	return out
}

// TimedViolation is the first finding that did not hold at an instant:
// the one a timeline opens at and marks. false when there is none.
func (v Verdict) TimedViolation() (Finding, bool) {
	for _, f := range v.Findings {
		if !f.Held && f.Timed {
			return f, true
		}
	}
	return Finding{}, false
}

// VerdictRecord is a verdict as JSON writes it: a struct that a line of
// output can embed beside fields of its own (Verdict's own MarshalJSON,
// promoted through an embedded Verdict, would write the verdict alone).
type VerdictRecord struct {
	Scenario string `json:"scenario"`
	Showed   bool   `json:"showed"`
	// Outcome is Verdict.Outcome: held or violated for code held to
	// rules, shown or not-shown for a scenario.
	Outcome  string             `json:"outcome"`
	Rules    bool               `json:"rules,omitempty"`
	Summary  string             `json:"summary"`
	Findings []Finding          `json:"findings,omitempty"`
	RunError string             `json:"run_error,omitempty"`
	Figures  map[string]float64 `json:"figures,omitempty"`
}

// MarshalJSON writes the verdict with its sentence as "summary", where
// a reader of an earlier version looks for it, and its findings.
func (v Verdict) MarshalJSON() ([]byte, error) { return json.Marshal(v.Record()) }

// Record is v as JSON writes it, its sentence as Summary.
func (v Verdict) Record() VerdictRecord {
	return VerdictRecord{Scenario: v.Scenario, Showed: v.Showed, Outcome: v.Outcome(), Rules: v.Rules,
		Summary: v.Sentence(), Findings: v.Findings, RunError: v.RunError, Figures: v.Figures}
}

// UnmarshalJSON reads what MarshalJSON writes, and a verdict of an
// earlier version, which has only its summary: that becomes its Summary.
// A verdict with findings gets its sentence from them again, so its
// "summary" is not kept beside them.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var j VerdictRecord
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("read verdict: %w", err)
	}
	*v = Verdict{Scenario: j.Scenario, Showed: j.Showed, Findings: j.Findings, RunError: j.RunError, Figures: j.Figures, Rules: j.Rules}
	if len(j.Findings) == 0 && j.RunError == "" {
		v.Summary = j.Summary
	}
	return nil
}
