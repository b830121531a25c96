package lab

import (
	"context"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ownership-election/playground/internal/grade"
	"github.com/ownership-election/playground/internal/tui/screen"
	"github.com/ownership-election/playground/lessons"
)

// gradeRun is the grading state machine that the lab screen and watch
// mode share: a grade runs (grading), its report comes in, a report whose
// steps all pass is verified under the race detector, and only a
// verified pass is reported as passed. A new grade or a cancel drops
// whatever is in flight: its result, when it still comes, carries an old
// sequence number and is ignored.
//
// Sequence numbers are unique in the program, not per machine: the
// screen and the watch see each other's messages (the root gives every
// message to both), and each takes only its own.
type gradeRun struct {
	seq       int                // the grade in flight, or the last one
	grading   bool               // the grade itself runs (not its verification)
	gradeFrom time.Time          // when it started
	cancel    context.CancelFunc // ends the grade or verification in flight
	report    *report            // the latest grade, nil before any
	gradedAt  time.Time          // when it came in
}

// gradeSeqs numbers every grade and cancel of the program.
var gradeSeqs atomic.Int64

func nextGradeSeq() int { return int(gradeSeqs.Add(1)) }

type (
	// gradeDoneMsg carries the report of the grade with sequence seq.
	gradeDoneMsg struct {
		seq    int
		report report
	}
	// verifyDoneMsg carries the verification of the grade with
	// sequence seq.
	verifyDoneMsg struct {
		seq int
		lab *grade.Report
	}
)

// gradeJob is what one grade needs: the course the lab is built from,
// the options of go test, and the lab with its manifest's steps.
type gradeJob struct {
	kit  *grade.Course
	opts grade.Options
	lab  lessons.Lab
}

// gradeCmd runs the lab's tests, exactly like `go test ./labs/<id>/`, off
// the UI goroutine.
func (j gradeJob) gradeCmd(ctx context.Context, seq int) tea.Cmd {
	return func() tea.Msg {
		return gradeDoneMsg{seq: seq, report: runGrade(ctx, j.kit, j.opts, j.lab)}
	}
}

// verifyCmd re-runs a passing lab under the race detector, several times
// (grade.Verify), off the UI goroutine.
func (j gradeJob) verifyCmd(ctx context.Context, seq int, rep *grade.Report) tea.Cmd {
	return func() tea.Msg {
		return verifyDoneMsg{seq: seq, lab: runVerify(ctx, j.kit, j.opts, rep)}
	}
}

// begin cancels the grade in flight, if any, and starts job at now.
func (g *gradeRun) begin(job gradeJob, now time.Time) tea.Cmd {
	g.halt()
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.grading, g.gradeFrom = true, now
	return job.gradeCmd(ctx, g.seq)
}

// halt stops the grade or verification in flight, if any: its result is
// dropped when it comes. The latest report stays.
func (g *gradeRun) halt() {
	g.release()
	g.grading = false
	g.seq = nextGradeSeq()
	if g.report.verifying() {
		// Its verification is dropped too: the first run's passes stay
		// unconfirmed rather than wait for runs that will never report.
		lab := *g.report.Lab
		lab.Status, lab.Message = grade.LabCanceled, "the runs under the race detector were stopped before they ended"
		g.report.Lab = &lab
	}
}

// release ends the context of the work in flight.
func (g *gradeRun) release() {
	if g.cancel != nil {
		g.cancel()
		g.cancel = nil
	}
}

// owns reports whether msg is the result of this machine's current
// grade or verification.
func (g *gradeRun) owns(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case gradeDoneMsg:
		return msg.seq == g.seq
	case verifyDoneMsg:
		return msg.seq == g.seq
	}
	return false
}

// graded takes the report of a grade at now; ok is false when it is not
// the grade in flight (an older one, a cancelled one, the other
// machine's). A report whose steps all pass starts its verification
// (cmd); any other ends the grade, and cmd tells the root how (LabGraded).
func (g *gradeRun) graded(msg gradeDoneMsg, job gradeJob, now time.Time) (ok bool, cmd tea.Cmd) {
	if msg.seq != g.seq || !g.grading || msg.report.Canceled {
		return false, nil
	}
	g.grading = false
	g.release()
	r := msg.report
	g.report, g.gradedAt = &r, now
	if !r.verifying() {
		return true, gradedCmd(job.lab.ID, g.report)
	}
	// Every step passed once; it counts once it passes again, under the
	// race detector, every time (grade.Verify).
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	return true, job.verifyCmd(ctx, g.seq, r.Lab)
}

// verified takes the verification of the latest report; ok is false when
// it is not the one in flight. Only a verified pass is reported to the
// root as passed (and so recorded in progress); any other end as graded.
func (g *gradeRun) verified(msg verifyDoneMsg, lab string) (ok bool, cmd tea.Cmd) {
	if msg.seq != g.seq || !g.report.verifying() || msg.lab.Status == grade.LabCanceled {
		return false, nil
	}
	g.release()
	g.report.Lab = msg.lab
	// The verification has the last word on each step: one it failed
	// (a race, a flaky run) is shown failed, with what it printed there.
	for i := range g.report.Steps {
		if i < len(msg.lab.Steps) {
			g.report.Steps[i].Step = msg.lab.Steps[i]
		}
	}
	if g.report.verified() {
		return true, screen.Send(screen.LabPassed{Lab: lab})
	}
	return true, gradedCmd(lab, g.report)
}
