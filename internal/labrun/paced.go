package labrun

import (
	"fmt"

	"github.com/ownership-election/playground/internal/history"
)

// The request rate while etcd refuses a replica's writes (the request
// fault "refuse"): code that tries again at once after each refusal
// sends hundreds of requests a second at an etcd that refuses them for
// want of capacity, and keeps a core busy doing it. The replica counts
// its code's refused writes while the refusal lasts and reports the
// count when it ends (replica/refusal.go); this rule judges the rate.
//
// The bound comes from the references of labs 07 and 09, whose loops
// pause 100 ms after a failed round: about ten rounds a second, a round
// being one refused request or a few (a grant, then a revoke that is
// refused too). Ten times that leaves room for a shorter pause, for
// backing off from a few milliseconds, and for a loaded machine; a loop
// with no pause at all, whose refusals come back within a millisecond,
// is far beyond it.

// pacedLimit is the most writes a second a replica's code may send
// while etcd refuses them.
const pacedLimit = 100

// pacedRetries is the rule, for the labs whose code runs its own retry
// loop (07's Candidate.Run, 09's Worker.Run).
var pacedRetries = history.Property{Name: "paced-retries", Find: labPacedRetries}

// labPacedRetries: while etcd refused a replica's writes, its code sent
// at most pacedLimit of them a second.
func labPacedRetries(f *history.Findings) history.Finding {
	refusals := 0
	for _, e := range f.Events {
		if e.Kind != history.Note || e.Facts == nil || e.Facts.Op != history.OpRefusal || e.Value <= 0 {
			continue
		}
		refusals++
		if rate := float64(e.Facts.Tries) / e.Value; rate > pacedLimit {
			return breaks("retry-storm", e.At, []string{e.Replica}, []history.Event{e},
				"While etcd refused %s's writes for %.1f s (etcdserver: too many requests), its code sent %d of them, %.0f a second: it tried again at once after each refusal. A pause between tries (100 ms keeps it near 10 a second) gives etcd room to recover; the bound is %d a second.",
				e.Replica, e.Value, e.Facts.Tries, rate, pacedLimit)
		}
	}
	if refusals == 0 {
		return holds("etcd refused no replica's writes in this run.")
	}
	return holds(fmt.Sprintf("While etcd refused their writes, the replicas' code paused between tries (at most %d writes a second).", pacedLimit))
}
