package cli

import (
	"strings"
	"testing"
)

func TestExperimentLabUsage(t *testing.T) {
	for _, args := range [][]string{
		{"experiment", "run", "--lab", "99"},
		{"experiment", "run", "--lab", "07", "--schedule", "no-such-schedule"},
		{"experiment", "run", "--lab", "07", "fencing"},
		{"experiment", "run", "--lab", "07", "--replicas", "1"},
		{"experiment", "run", "--lab", "07", "--replicas", "8"},
		{"experiment", "run", "--lab", "07", "--schedule", "crash-owner", "--faults", "x.json"},
		{"experiment", "run", "--lab", "07", "--faults", "/no/such/file"},
		{"experiment", "run", "--reference"},
		{"experiment", "run", "fencing", "--schedule", "crash-owner"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if strings.TrimSpace(stderr) == "" {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}
