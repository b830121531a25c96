package aliases

import "testing"

func TestCurrentMapsOldNamesAndKeepsOthers(t *testing.T) {
	for old, now := range Table() {
		if got := Current(old); got != now {
			t.Errorf("Current(%q) = %q, want %q", old, got, now)
		}
		if _, again := renamed[now]; again {
			t.Errorf("%q maps to %q, itself an old name: map to the newest", old, now)
		}
	}
	if got := Current("fencing"); got != "fencing" {
		t.Errorf("Current(fencing) = %q", got)
	}
}
