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

// TestGlobalFlagsAfterTheCommand: the global flags are taken before the
// command's name and among its arguments alike, a "--" keeps what follows
// for the command, and help after the name stays the command's.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		name      string
		rest      []string
		user, cls string
		noPublish bool
	}{
		{[]string{"grade", "01", "--class", "ada.json"}, "grade", []string{"01"}, "", "ada.json", false},
		{[]string{"--class", "ada.json", "grade", "01"}, "grade", []string{"01"}, "", "ada.json", false},
		{[]string{"grade", "--user=ada", "--json", "01", "--no-publish"}, "grade", []string{"--json", "01"}, "ada", "", true},
		{[]string{"experiment", "run", "x", "-user", "bob", "--", "--class", "c"}, "experiment", []string{"run", "x", "--", "--class", "c"}, "bob", "", false},
		{[]string{"quiz", "--help"}, "quiz", []string{"--help"}, "", "", false},
		{[]string{"grade", "---user", "x"}, "grade", []string{"---user", "x"}, "", "", false},
		{nil, "", nil, "", "", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		user := fs.String("user", "", "")
		cls := fs.String("class", "", "")
		noPublish := fs.Bool("no-publish", false, "")
		fs.Bool("help", false, "")
		name, rest, err := parseGlobals(fs, tc.args)
		if err != nil || name != tc.name || !slices.Equal(rest, tc.rest) ||
			*user != tc.user || *cls != tc.cls || *noPublish != tc.noPublish {
			t.Errorf("parseGlobals(%q) = %q %q %v; user %q class %q no-publish %v; want %q %q, user %q class %q no-publish %v",
				tc.args, name, rest, err, *user, *cls, *noPublish, tc.name, tc.rest, tc.user, tc.cls, tc.noPublish)
		}
	}
}
