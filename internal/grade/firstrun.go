package grade

import "os"

// FirstVerifyNote says why the first verification of a lab is slower than
// the ones after it, for `playground grade` and the lab screen.
const FirstVerifyNote = "the first verification compiles the lab with the race detector (a build of its own, etcd included for the etcd labs): 10-25 s on a quiet two-core machine, minutes on a busy one; later ones reuse that build and take seconds"

// RaceBuildKept reports whether a race-detector test binary of o's lab is
// kept from an earlier verification, so that verifying now reuses its
// build instead of compiling it first.
func RaceBuildKept(o Options) bool {
	o.Race = true
	p := o.binPath()
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}
