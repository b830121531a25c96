package class

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ownership-election/playground/internal/progress"
	"github.com/ownership-election/playground/internal/sanitize"
)

// Summary is what a learner publishes for the instructor's board: how far
// they got in each lesson, their best quiz score and the labs they passed.
// It carries no answers, so classmates' work stays their own.
type Summary struct {
	Learner string                   `json:"learner"`
	Updated time.Time                `json:"updated"`
	Lessons map[string]LessonSummary `json:"lessons,omitempty"` // by lesson id
	Labs    map[string]LabSummary    `json:"labs,omitempty"`    // by lab id
	// Unreadable says why the published value could not be read as a
	// summary (not JSON, too large); the board shows it as invalid.
	Unreadable string `json:"-"`
	// Checked says, for each lab passed, what the instructor's regrade
	// found (the board fills it in; a learner cannot publish it).
	Checked map[string]Check `json:"-"`
}

// Check is where a lab's pass stands on the board.
type Check struct {
	State  CheckState `json:"state"`
	Reason string     `json:"reason,omitempty"` // why a regrade refused it
}

// CheckState is a pass as claimed by the learner, verified by the
// instructor's regrade of the submitted file, or refused by it.
type CheckState string

// The states of a pass on the board.
const (
	Claimed  CheckState = "claimed"
	Verified CheckState = "verified"
	Refused  CheckState = "refused"
)

// LessonSummary is one lesson's line on the board.
type LessonSummary struct {
	Read      []int   `json:"read"`       // pages read, zero-based, sorted
	QuizTaken bool    `json:"quiz_taken"` // a quiz attempt was finished
	QuizBest  float64 `json:"quiz_best"`  // best score, a share 0..1
}

// LabSummary records that a lab passed, and when it first did.
type LabSummary struct {
	Passed time.Time `json:"passed"`
}

// FromProgress summarises a learner's saved progress.
func FromProgress(learner string, p *progress.Progress) Summary {
	s := Summary{Learner: learner, Lessons: map[string]LessonSummary{}, Labs: map[string]LabSummary{}}
	if p == nil {
		return s
	}
	s.Updated = p.Updated
	for id, l := range p.Lessons {
		if l == nil {
			continue
		}
		s.Lessons[id] = LessonSummary{Read: slices.Clone(l.PagesRead), QuizTaken: l.Quiz != nil, QuizBest: l.BestQuiz}
		for lab, at := range l.LabsPassed {
			s.Labs[lab] = LabSummary{Passed: at}
		}
	}
	return s
}

// Merge combines two summaries of one learner (say, the published one and
// a fresh one from a playground that restarted elsewhere) so that nothing
// either records is lost: more pages, the better quiz, every lab passed
// with its earliest time.
func (s Summary) Merge(o Summary) Summary {
	out := Summary{Learner: s.Learner, Updated: s.Updated, Lessons: maps.Clone(s.Lessons), Labs: maps.Clone(s.Labs)}
	if out.Learner == "" {
		out.Learner = o.Learner
	}
	if o.Updated.After(out.Updated) {
		out.Updated = o.Updated
	}
	if out.Lessons == nil {
		out.Lessons = map[string]LessonSummary{}
	}
	if out.Labs == nil {
		out.Labs = map[string]LabSummary{}
	}
	for id, ol := range o.Lessons {
		l := out.Lessons[id]
		l.Read = union(l.Read, ol.Read)
		l.QuizTaken = l.QuizTaken || ol.QuizTaken
		l.QuizBest = max(l.QuizBest, ol.QuizBest)
		out.Lessons[id] = l
	}
	for id, ol := range o.Labs {
		if l, ok := out.Labs[id]; !ok || (!ol.Passed.IsZero() && ol.Passed.Before(l.Passed)) {
			out.Labs[id] = ol
		}
	}
	return out
}

// covers reports whether s already records everything o does, so that
// publishing o would change nothing.
func (s Summary) covers(o Summary) bool {
	for id, ol := range o.Lessons {
		l, ok := s.Lessons[id]
		if !ok || len(union(l.Read, ol.Read)) != len(l.Read) || (ol.QuizTaken && !l.QuizTaken) || l.QuizBest < ol.QuizBest {
			return false
		}
	}
	for id, ol := range o.Labs {
		l, ok := s.Labs[id]
		if !ok || (!ol.Passed.IsZero() && ol.Passed.Before(l.Passed)) {
			return false
		}
	}
	return true
}

// Pages is the number of pages read.
func (l LessonSummary) Pages() int { return len(l.Read) }

// union returns the sorted union of two sorted sets of page numbers.
func union(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// LabsPassed counts the labs passed.
func (s Summary) LabsPassed() int { return len(s.Labs) }

// MaxSummaryBytes bounds a published summary. A whole course's summary is
// a few kilobytes; a larger value is a learner writing something else
// under the key, and the board does not keep it.
const MaxSummaryBytes = 64 << 10

func decodeSummary(b []byte) (Summary, error) {
	var s Summary
	if len(b) > MaxSummaryBytes {
		return s, fmt.Errorf("decode class summary: %d bytes, more than the %d a summary can be", len(b), MaxSummaryBytes)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("decode class summary: %w", err)
	}
	// The learner wrote it: its lesson and lab ids reach the board's
	// "invalid" lines and the CSV.
	sanitize.Strings(&s)
	return s, nil
}

// readSummary decodes a published value for the board: one that cannot
// be read is kept as an unreadable summary, so the board shows it as
// invalid instead of keeping the learner's older values up.
func readSummary(name string, b []byte) Summary {
	s, err := decodeSummary(b)
	if err != nil {
		s = Summary{Unreadable: err.Error()}
	}
	s.Learner = name
	return s
}
