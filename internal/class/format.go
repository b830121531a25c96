package class

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Course is what the board measures learners against: the lessons (with
// their page counts) and the labs, in course order.
type Course struct {
	Lessons []CourseLesson
	Labs    []string
}

// CourseLesson is one lesson's id and size.
type CourseLesson struct {
	ID    string
	Pages int
}

// Row is one learner's totals on the board.
type Row struct {
	Learner      string  `json:"learner"`
	Published    bool    `json:"published"`    // has published at least once
	LessonsRead  int     `json:"lessons_read"` // lessons with every page read
	PagesRead    int     `json:"pages_read"`   // over the whole course
	QuizzesTaken int     `json:"quizzes_taken"`
	QuizAverage  float64 `json:"quiz_average"` // mean best score over quizzes taken, 0..1
	LabsPassed   int     `json:"labs_passed"`
	Labs         []bool  `json:"labs"` // in Course.Labs order
	// Checks is where each passed lab stands (in Course.Labs order; the
	// zero Check for a lab not passed): claimed, verified or refused.
	Checks       []Check   `json:"checks"`
	LabsVerified int       `json:"labs_verified"`
	Updated      time.Time `json:"updated,omitzero"`
	Summary      Summary   `json:"summary"`
	// Invalid lists what the course cannot have produced in the summary
	// (Course.Check); such a row counts no progress at all.
	Invalid []string `json:"invalid,omitempty"`
	// Usage is what the learner keeps under their prefix, and Budget
	// what they may (AddUsage); nil when it was not measured.
	Usage  *Usage `json:"usage,omitempty"`
	Budget int64  `json:"budget,omitempty"`
}

// AddUsage puts each learner's measured usage and the budget on their
// row.
func AddUsage(rows []Row, usage map[string]Usage, budget int64) {
	for i := range rows {
		if u, ok := usage[rows[i].Learner]; ok {
			rows[i].Usage, rows[i].Budget = &u, budget
		}
	}
}

// OverBudget reports whether the row's learner keeps more than their
// budget.
func (r Row) OverBudget() bool { return r.Usage != nil && r.Usage.Over(r.Budget) }

// Rows computes every learner's totals against c. A summary that fails
// Course.Check at now is shown as invalid, with zero progress: a learner
// can write anything under their prefix, so nothing unchecked is counted.
func Rows(c Course, summaries []Summary, now time.Time) []Row {
	rows := make([]Row, len(summaries))
	for i, s := range summaries {
		rows[i] = row(c, s, now)
	}
	return rows
}

func row(c Course, s Summary, now time.Time) Row {
	r := Row{Learner: s.Learner, Published: s.Unreadable != "" || !s.Updated.IsZero() || len(s.Lessons) > 0 || len(s.Labs) > 0, Updated: s.Updated, Summary: s}
	r.Labs = make([]bool, len(c.Labs))
	if r.Invalid = c.Check(s, now); len(r.Invalid) > 0 {
		r.Updated, r.Summary = time.Time{}, Summary{Learner: s.Learner}
		return r
	}
	var quizSum float64
	for _, l := range c.Lessons {
		ls := s.Lessons[l.ID]
		r.PagesRead += min(ls.Pages(), l.Pages)
		if l.Pages > 0 && ls.Pages() >= l.Pages {
			r.LessonsRead++
		}
		if ls.QuizTaken {
			r.QuizzesTaken++
			quizSum += ls.QuizBest
		}
	}
	if r.QuizzesTaken > 0 {
		r.QuizAverage = quizSum / float64(r.QuizzesTaken)
	}
	r.Checks = make([]Check, len(c.Labs))
	for j, lab := range c.Labs {
		if _, passed := s.Labs[lab]; !passed {
			continue
		}
		r.Checks[j] = s.Checked[lab]
		if r.Checks[j].State == "" {
			r.Checks[j].State = Claimed
		}
		switch r.Checks[j].State {
		case Refused:
			continue // a pass the regrade refused is no pass
		case Verified:
			r.LabsVerified++
		}
		r.Labs[j] = true
		r.LabsPassed++
	}
	return r
}

// Mark is a lab's state in one plain character: V verified, c claimed
// (not verified yet), X refused, . not passed.
func (c Check) Mark() byte {
	switch c.State {
	case Verified:
		return 'V'
	case Claimed:
		return 'c'
	case Refused:
		return 'X'
	}
	return '.'
}

// TotalPages is the number of pages in the course.
func (c Course) TotalPages() int {
	n := 0
	for _, l := range c.Lessons {
		n += l.Pages
	}
	return n
}

// Percent is the share of the course's pages read, 0..100.
func (r Row) Percent(c Course) int {
	if t := c.TotalPages(); t > 0 {
		return 100 * r.PagesRead / t
	}
	return 0
}

// WritePlain prints the board as a text table that fits 80 columns.
func WritePlain(w io.Writer, c Course, rows []Row) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %-5s %-8s %-10s %-6s %-*s %s\n", "LEARNER", "READ", "LESSONS", "QUIZZES", "LABS", max(len(c.Labs), 4), "PASSED", "UPDATED")
	for _, r := range rows {
		if len(r.Invalid) > 0 {
			fmt.Fprintf(&b, "%-16s INVALID SUMMARY: %s\n", trunc(r.Learner, 16), strings.Join(r.Invalid, "; "))
			continue
		}
		quiz := "-"
		if r.QuizzesTaken > 0 {
			quiz = fmt.Sprintf("%d, %3.0f%%", r.QuizzesTaken, 100*r.QuizAverage)
		}
		marks := make([]byte, len(r.Checks))
		for i, ch := range r.Checks {
			marks[i] = ch.Mark()
		}
		updated := "never published"
		if !r.Updated.IsZero() {
			updated = r.Updated.Local().Format("01-02 15:04")
		}
		fmt.Fprintf(&b, "%-16s %-5s %-8s %-10s %-6s %-*s %s\n", trunc(r.Learner, 16), fmt.Sprintf("%d%%", r.Percent(c)),
			fmt.Sprintf("%d/%d", r.LessonsRead, len(c.Lessons)), quiz,
			fmt.Sprintf("%d/%d", r.LabsPassed, len(c.Labs)), max(len(c.Labs), 4), string(marks), updated)
	}
	b.WriteString("PASSED: V verified by class verify, c claimed (not verified yet), X refused by it, . not passed\n")
	for _, r := range rows {
		for i, ch := range r.Checks {
			if ch.State == Refused {
				fmt.Fprintf(&b, "refused: %s %s: %s\n", r.Learner, c.Labs[i], ch.Reason)
			}
		}
	}
	for _, r := range rows {
		if r.OverBudget() {
			fmt.Fprintf(&b, "over budget: %s keeps %s under %s, more than the %s budget: run playground class repair %s\n",
				r.Learner, r.Usage, Prefix(r.Learner), mib(r.Budget), r.Learner)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// WriteJSON writes the rows as one JSON document.
func WriteJSON(w io.Writer, c Course, rows []Row) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Lessons  []CourseLesson `json:"lessons"`
		Labs     []string       `json:"labs"`
		Learners []Row          `json:"learners"`
	}{c.Lessons, c.Labs, rows})
}

// WriteCSV writes one line per learner for a grade book: pages read and
// best quiz score per lesson, then the date each lab first passed.
func WriteCSV(w io.Writer, c Course, rows []Row) error {
	cw := csv.NewWriter(w)
	head := []string{"learner", "pages_read", "lessons_read", "quizzes_taken", "quiz_average", "labs_passed"}
	for _, l := range c.Lessons {
		head = append(head, l.ID+" pages", l.ID+" quiz")
	}
	head = append(head, c.Labs...)
	head = append(head, "invalid", "stored_bytes")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{r.Learner, fmt.Sprint(r.PagesRead), fmt.Sprint(r.LessonsRead), fmt.Sprint(r.QuizzesTaken),
			fmt.Sprintf("%.2f", r.QuizAverage), fmt.Sprint(r.LabsPassed)}
		for _, l := range c.Lessons {
			ls := r.Summary.Lessons[l.ID]
			quiz := ""
			if ls.QuizTaken {
				quiz = fmt.Sprintf("%.2f", ls.QuizBest)
			}
			rec = append(rec, fmt.Sprint(ls.Pages()), quiz)
		}
		for _, lab := range c.Labs {
			passed := ""
			if l, ok := r.Summary.Labs[lab]; ok {
				passed = l.Passed.UTC().Format(time.RFC3339) + " " + string(r.Checks[slices.Index(c.Labs, lab)].State)
			}
			rec = append(rec, passed)
		}
		stored := ""
		if r.Usage != nil {
			stored = fmt.Sprint(r.Usage.Bytes)
		}
		rec = append(rec, strings.Join(r.Invalid, "; "), stored)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
