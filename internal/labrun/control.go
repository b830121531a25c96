package labrun

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// The control protocol: the lab screen runs a lab run in a child process
// (playground experiment run --lab --control) and drives its faults by
// hand with lines on the child's standard input, one a line: a fault and
// a replica ("pause r2"), or "end" to end a by-hand run. ControlLine and
// EndLine write them; Control reads and does them.

// Fault is what a control line does to a replica: what the lab screen's
// fault keys do, and the experiment screen's to its own replicas.
type Fault string

// The faults a control line can do.
const (
	Pause   Fault = "pause"
	Resume  Fault = "resume"
	Cut     Fault = "cut"
	Heal    Fault = "heal"
	Crash   Fault = "crash"
	Restart Fault = "restart"
)

// EndLine is the control line that ends a run of the by-hand schedule.
const EndLine = "end"

// ControlLine is the control line that does f to the replica named
// replica ("pause r2").
func ControlLine(f Fault, replica string) string { return string(f) + " " + replica }

// Control does the lines read from in to the run's replicas, as the
// experiment screen's keys do to its own: the lab screen sends them,
// since the run is in this process and the screen in another. A line it
// cannot do is said on errs, and the run goes on. An end line ends a
// by-hand run (end; nil for a run that ends by itself), and so does the
// end of in: no line can come to end it then.
func Control(run *experiment.Run, in io.Reader, errs io.Writer, end func()) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var err error
		if strings.TrimSpace(sc.Text()) == EndLine {
			err = endByHand(end)
		} else {
			err = doFault(run, sc.Text())
		}
		if err != nil {
			fmt.Fprintf(errs, "control: %v\n", err)
		}
	}
	if end != nil {
		end()
	}
}

// endByHand does an end line.
func endByHand(end func()) error {
	if end == nil {
		return fmt.Errorf(`"end": this run ends by itself (only --schedule %s waits for an end)`, ByHand)
	}
	end()
	return nil
}

// splitLine reads a control line's fault and replica ("pause r2").
func splitLine(line string) (f Fault, replica string, ok bool) {
	verb, name, ok := strings.Cut(strings.TrimSpace(line), " ")
	return Fault(verb), strings.TrimSpace(name), ok
}

// doFault does one control line's fault.
func doFault(run *experiment.Run, line string) error {
	f, name, ok := splitLine(line)
	if !ok {
		return fmt.Errorf("%q: want a fault and a replica (pause r2)", line)
	}
	r := run.Replica(name)
	if r == nil {
		return fmt.Errorf("%q: no replica %s", line, name)
	}
	switch f {
	case Pause:
		r.Pause(history.ByLearner)
	case Resume:
		r.Resume(history.ByLearner)
	case Cut:
		r.Partition(history.ByLearner)
	case Heal:
		r.Heal(history.ByLearner)
	case Crash:
		r.Crash(history.ByLearner)
	case Restart:
		return r.Restart(history.ByLearner)
	default:
		return fmt.Errorf("%q: no fault %s (pause, resume, cut, heal, crash, restart)", line, f)
	}
	return nil
}
