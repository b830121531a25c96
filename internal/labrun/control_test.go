package labrun

import (
	"strings"
	"testing"

	"github.com/ownership-election/playground/internal/experiment"
)

// TestLabControlEndsByHand: an end line ends a by-hand run, once, and
// so does the end of the input, after which no line could end it.
func TestLabControlEndsByHand(t *testing.T) {
	ends := 0
	var errs strings.Builder
	Control(&experiment.Run{}, strings.NewReader(" end \nend\n"), &errs, func() { ends++ })
	if ends < 1 || errs.Len() != 0 {
		t.Fatalf("end lines: %d ends, errors %q", ends, errs.String())
	}
	ends = 0
	Control(&experiment.Run{}, strings.NewReader("pause r9\n"), &errs, func() { ends++ })
	if ends != 1 {
		t.Fatalf("the input's end: %d ends, want 1", ends)
	}
}

// TestLabControlSaysWhatItCannotDo: a control line that is not a fault
// and a replica, names no replica of the run, or names no fault is said
// on standard error, and the lines after it are still read.
func TestLabControlSaysWhatItCannotDo(t *testing.T) {
	var errs strings.Builder
	Control(&experiment.Run{}, strings.NewReader("pause\npause r9\n\nfreeze r1\nend\n"), &errs, nil)
	for _, want := range []string{`"pause": want a fault and a replica`, `"pause r9": no replica r9`, `"": want a fault`, `"end": this run ends by itself`} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("control errors %q do not say %q", errs.String(), want)
		}
	}
}

// TestControlLinesReadBack: the lines the lab screen writes are read
// back as the fault and replica they were written for.
func TestControlLinesReadBack(t *testing.T) {
	for _, f := range []Fault{Pause, Resume, Cut, Heal, Crash, Restart} {
		line := ControlLine(f, "r2")
		if got, name, ok := splitLine(line); !ok || got != f || name != "r2" {
			t.Errorf("ControlLine(%s, r2) = %q, read back as %q %q (%v)", f, line, got, name, ok)
		}
	}
}
