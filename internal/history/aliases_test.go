package history

import "testing"

func TestCurrentMapsOldNamesAndKeepsOthers(t *testing.T) {
	for old, now := range OldNames() {
		if got := CurrentName(old); got != now {
			t.Errorf("CurrentName(%q) = %q, want %q", old, got, now)
		}
		if _, again := renamed[now]; again {
			t.Errorf("%q maps to %q, itself an old name: map to the newest", old, now)
		}
	}
	if got := CurrentName("fencing"); got != "fencing" {
		t.Errorf("CurrentName(fencing) = %q", got)
	}
}
