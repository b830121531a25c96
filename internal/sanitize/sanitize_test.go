package sanitize

import (
	"testing"
	"time"
)

func TestText(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain text stays", "ok  step 1: lease granted → owner", "ok  step 1: lease granted → owner"},
		{"newline and tab stay", "a\n\tb", "a\n\tb"},
		{"window title (OSC 0, BEL)", "x\x1b]0;pwned\x07y", "xy"},
		{"clipboard (OSC 52, ST)", "x\x1b]52;c;ZWNobyBoaQ==\x1b\\y", "xy"},
		{"colour and cursor moves (CSI)", "\x1b[31mred\x1b[0m\x1b[2J\x1b[1;1H", "red"},
		{"device control string (DCS)", "a\x1bP1$r0m\x1b\\b", "ab"},
		{"unterminated OSC runs to the end", "safe\x1b]0;title", "safe"},
		{"a lone ESC", "a\x1b", "a"},
		{"carriage return is shown", "PASS\rFAIL", "PASS␍FAIL"},
		{"bell and backspace are shown", "a\x07\x08", "a␇␈"},
		{"DEL is shown", "a\x7f", "a␡"},
		{"a C1 CSI in UTF-8 is shown", "a\u009b31m", `a\u009b31m`},
		{"bidirectional override is shown", "admin\u202e", `admin\u202e`},
		{"bytes that are not UTF-8", "a\xff\x9bb", "a\ufffd\ufffdb"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("%s: Text(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestLineShowsNewlineAndTab(t *testing.T) {
	if got, want := Line("alice\nbob 100%\t"), "alice␊bob 100%␉"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

type inner struct {
	Name string
	Tags []string
}

type outer struct {
	Title   string
	Kind    kind
	Ptr     *inner
	List    []inner
	ByName  map[string]inner
	When    time.Time
	hidden  string // not settable: Strings must pass it by without a panic
	Numbers []int
}

type kind string

func TestStringsReachesEveryField(t *testing.T) {
	evil := "a\x1b]0;t\x07b"
	v := outer{Title: evil, Kind: kind(evil), Ptr: &inner{Name: evil, Tags: []string{evil}},
		List: []inner{{Name: evil}}, ByName: map[string]inner{evil: {Name: evil}}, hidden: evil, Numbers: []int{1}}
	Strings(&v)
	for what, got := range map[string]string{"Title": v.Title, "Kind": string(v.Kind), "Ptr.Name": v.Ptr.Name,
		"Ptr.Tags": v.Ptr.Tags[0], "List.Name": v.List[0].Name, "ByName value": v.ByName["ab"].Name} {
		if got != "ab" {
			t.Errorf("%s = %q, want %q", what, got, "ab")
		}
	}
	if _, ok := v.ByName[evil]; ok || len(v.ByName) != 1 {
		t.Errorf("map keys = %q, want only the cleaned key", v.ByName)
	}
}

func BenchmarkTextSafe(b *testing.B) {
	s := "  ok   step 3: the lock is held by r1 (token 42) → r2 waits"
	for b.Loop() {
		Text(s)
	}
}
