package cli

import (
	"flag"
	"slices"
	"testing"
)

// TestParseFlagsTakesFlagsAnywhere: flags before, between and after the
// arguments, arguments kept in order, and "--" ends the flags.
func TestParseFlagsTakesFlagsAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		purge bool
		n     int
		want  []string
	}{
		{[]string{"ada", "--purge"}, true, 0, []string{"ada"}},
		{[]string{"--purge", "ada", "bob"}, true, 0, []string{"ada", "bob"}},
		{[]string{"ada", "-n", "3", "bob", "--purge"}, true, 3, []string{"ada", "bob"}},
		{[]string{"ada", "--", "--purge", "-n"}, false, 0, []string{"ada", "--purge", "-n"}},
		{[]string{"--", "-x"}, false, 0, []string{"-x"}},
		{nil, false, 0, nil},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		purge := fs.Bool("purge", false, "")
		n := fs.Int("n", 0, "")
		got, err := parseFlags(fs, tc.args)
		if err != nil || !slices.Equal(got, tc.want) || *purge != tc.purge || *n != tc.n {
			t.Errorf("parseFlags(%q) = %q, %v; purge %v n %d; want %q purge %v n %d",
				tc.args, got, err, *purge, *n, tc.want, tc.purge, tc.n)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	if _, err := parseFlags(fs, []string{"ada", "--nope"}); err == nil {
		t.Fatal("an unknown flag after an argument was accepted")
	} else if _, ok := err.(*UsageError); !ok {
		t.Fatalf("error %T, want *UsageError", err)
	}
}
