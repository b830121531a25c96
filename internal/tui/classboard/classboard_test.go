package classboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ownership-election/playground/internal/class"
)

func board(n int) (Options, map[string]class.Summary) {
	course := class.Course{Lessons: []class.CourseLesson{{ID: "l1", Pages: 2}, {ID: "l2", Pages: 2}}, Labs: []string{"01_cas", "02_lock"}}
	sums := map[string]class.Summary{}
	var names []string
	for i := range n {
		name := fmt.Sprintf("learner%02d", i)
		names = append(names, name)
		sums[name] = class.Summary{Learner: name}
	}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	return Options{Course: course, Where: "https://etcd:2379", Now: func() time.Time { return now },
		Snapshot: func() []class.Summary {
			out := make([]class.Summary, len(names))
			for i, n := range names {
				out[i] = sums[n]
			}
			return out
		}}, sums
}

func screen(m tea.Model) string { return ansi.Strip(m.(Model).Render()) }

func TestBoardShowsChangesAndSorts(t *testing.T) {
	opts, sums := board(3)
	changes := make(chan string, 1)
	opts.Changes = changes
	var m tea.Model = New(opts)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if s := screen(m); !strings.Contains(s, "3 learners · 0 labs passed") || !strings.Contains(s, "learner02") || !strings.Contains(s, "live") {
		t.Fatalf("first screen:\n%s", s)
	}
	sums["learner02"] = class.Summary{Learner: "learner02", Updated: time.Date(2026, 11, 30, 9, 58, 0, 0, time.UTC),
		Lessons: map[string]class.LessonSummary{"l1": {Read: []int{0, 1}}},
		Labs:    map[string]class.LabSummary{"02_lock": {Passed: time.Date(2026, 11, 30, 9, 59, 0, 0, time.UTC)}}}
	m, cmd := m.Update(ChangedMsg{Learner: "learner02"})
	if cmd == nil {
		t.Error("after a change the board must wait for the next one")
	}
	s := screen(m)
	line := lineWith(s, "learner02")
	for _, want := range []string{"•", "50%", "1/2", "·○", "2 min ago"} {
		if !strings.Contains(line, want) {
			t.Errorf("learner02's line %q lacks %q", line, want)
		}
	}
	if !strings.Contains(s, "1 labs passed") {
		t.Errorf("total not updated:\n%s", s)
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 's', Text: "s"})
	first := strings.Split(strings.TrimSpace(strings.SplitN(screen(m), "updated", 2)[1]), "\n")[0]
	if !strings.Contains(first, "learner02") {
		t.Errorf("sorted by progress, learner02 should come first; first row %q", first)
	}
	m, _ = m.Update(WatchEndedMsg{})
	if !strings.Contains(screen(m), "not updating") {
		t.Error("a board whose watch ended must say it no longer updates")
	}
}

func TestBoardFitsAndScrolls(t *testing.T) {
	opts, _ := board(200)
	var m tea.Model = New(opts)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	s := screen(m)
	lines := strings.Split(s, "\n")
	if len(lines) > 24 {
		t.Errorf("%d lines at 80x24", len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line wider than 80 (%d): %q", w, l)
		}
	}
	for range 30 {
		m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if s := screen(m); !strings.Contains(s, "learner030") && !strings.Contains(s, "learner30") {
		t.Errorf("after 30 downs the cursor's row must be visible:\n%s", s)
	}
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd == nil {
		t.Error("q must quit")
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func TestBoardShowsInvalidSummariesAndTheCluster(t *testing.T) {
	opts, sums := board(2)
	now := opts.Now()
	sums["learner00"] = class.Summary{Learner: "learner00", Updated: now,
		Lessons: map[string]class.LessonSummary{"l1": {Read: []int{0, 1}, QuizTaken: true, QuizBest: 50}},
		Labs:    map[string]class.LabSummary{"01_cas": {Passed: now}, "02_lock": {Passed: now}}}
	st := class.State{Live: true}
	opts.State = func() class.State { return st }
	opts.Changes = make(chan string)
	var m tea.Model = New(opts)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	s := screen(m)
	line := lineWith(s, "learner00")
	if !strings.Contains(line, "invalid summary") || !strings.Contains(line, "5000%") {
		t.Errorf("a quiz score of 5000%% must show as invalid, not as progress: %q", line)
	}
	if !strings.Contains(s, "0 labs passed") {
		t.Errorf("an invalid summary's labs must not count:\n%s", s)
	}
	st = class.State{Reason: "etcdserver: leader changed"}
	m, _ = m.Update(ChangedMsg{Learner: class.Everyone})
	s = screen(m)
	if !strings.Contains(s, "reconnecting: etcdserver: leader changed") || strings.Contains(strings.SplitN(s, "\n", 2)[0], "live") {
		t.Errorf("a board whose watch failed must say it is reconnecting and why:\n%s", s)
	}
	st = class.State{Live: true, Alarm: "NOSPACE: etcd is full, nobody can save; run playground class repair"}
	m, _ = m.Update(ChangedMsg{Learner: class.Everyone})
	if s := screen(m); !strings.Contains(s, "NOSPACE") || !strings.Contains(s, "class repair") {
		t.Errorf("an alarm must be on the board with its fix:\n%s", s)
	}
}

// TestBoardShowsWhatVerifyFound: a pass is a claim (○) until class verify
// regrades the submitted file; then it is verified (✓) or refused (✗),
// and a refused pass does not count.
func TestBoardShowsWhatVerifyFound(t *testing.T) {
	opts, sums := board(1)
	at := opts.Now().Add(-time.Hour)
	sums["learner00"] = class.Summary{Learner: "learner00", Updated: at,
		Labs:    map[string]class.LabSummary{"01_cas": {Passed: at}, "02_lock": {Passed: at}},
		Checked: map[string]class.Check{"01_cas": {State: class.Verified}, "02_lock": {State: class.Refused, Reason: "step 2 fails"}}}
	var m tea.Model = New(opts)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	s := screen(m)
	if line := lineWith(s, "learner00"); !strings.Contains(line, "✓✗") || !strings.Contains(line, "1/2") {
		t.Errorf("learner00's line %q: want ✓✗ and 1/2 labs (the refused one does not count)", line)
	}
	if !strings.Contains(s, "✓ verified") {
		t.Errorf("the board must say what its marks mean:\n%s", s)
	}
}
