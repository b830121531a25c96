package theme

import "testing"

func TestExpandTabs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"no tabs", "no tabs"},
		{"\treturn", "    return"},
		{"func f() {\n\tif x {\n\t\ty()\n\t}\n}", "func f() {\n    if x {\n        y()\n    }\n}"},
		{"a\tb", "a   b"},
		{"abcd\te", "abcd    e"},
		{"mu\t\tsync.Mutex // ü\tx", "mu      sync.Mutex // ü x"},
	} {
		if got := ExpandTabs(tc.in); got != tc.want {
			t.Errorf("ExpandTabs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
