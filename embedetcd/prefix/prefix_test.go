package prefix

import "testing"

func TestDefault(t *testing.T) {
	t.Setenv("PLAYGROUND_USER", "ada lovelace/x")
	if got, want := Default(), "/playground/ada_lovelace_x/"; got != want {
		t.Fatalf("Default() = %q, want %q", got, want)
	}
	t.Setenv("PLAYGROUND_USER", "")
	if got := Default(); len(got) < len("/playground/x/") || got[len(got)-1] != '/' {
		t.Fatalf("Default() without PLAYGROUND_USER = %q", got)
	}
}
