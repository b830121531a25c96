package sentence

import "testing"

func TestCapitalize(t *testing.T) {
	for in, want := range map[string]string{
		"":              "",
		"etcd answered": "Etcd answered",
		"Already":       "Already",
		"élan":          "Élan",
		"2 owners":      "2 owners",
	} {
		if got := Capitalize(in); got != want {
			t.Errorf("Capitalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "",
		"one line":                   "one line",
		"dial: refused\nretrying...": "dial: refused",
		"\nafter a blank first line": "",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
