package embedetcd

import (
	"net"
	"strconv"
	"testing"
)

// A member's ports come from below the ephemeral range, so that no
// outgoing connection can take one while the member is stopped, and no
// two members share one.
func TestMemberPortsBelowEphemeralRange(t *testing.T) {
	lo, hi := belowEphemeral()
	used := map[string]bool{}
	for range 50 {
		addr, err := freeAddr(used)
		if err != nil {
			t.Fatal(err)
		}
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if port < lo || port >= hi {
			t.Errorf("port %d is outside %d-%d", port, lo, hi-1)
		}
	}
	if len(used) != 50 {
		t.Errorf("50 picks gave %d distinct addresses", len(used))
	}
}
