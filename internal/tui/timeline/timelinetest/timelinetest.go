// Package timelinetest holds histories for the tests of the timeline and
// of the screens that draw it.
package timelinetest

import (
	"fmt"
	"time"

	"github.com/ownership-election/playground/internal/history"
)

// FencingEvents is a history of a run of fencing (fencing on), 3.2 s
// in: b1 won with token 6, was paused past its TTL, etcd deleted its
// key, b3 took over with token 7, b1 woke and wrote with token 6 and was
// refused.
func FencingEvents() []history.Event {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	key := func(at int, name string, create, rev int64, lease int64) history.Event {
		k := history.StoreKey{Key: "election-1/" + fmt.Sprintf("%016x", lease), Value: name, CreateRevision: create, ModRevision: rev, Version: 1, Lease: lease}
		return history.Event{At: ms(at), Kind: history.KeyChanged, Text: fmt.Sprintf("etcd: %s = %s (revision %d)", k.Key, name, rev),
			Facts: &history.Facts{Op: "put", Key: k.Key, Revision: rev, Succeeded: true, Lease: lease, Held: &k}}
	}
	grant := func(at int, r string) history.Event {
		return history.Event{At: ms(at), Kind: history.LeaseGranted, Replica: r, TTL: 1, Text: "lease granted, TTL 1s",
			Facts: &history.Facts{Op: "grant", Succeeded: true, GrantedTTL: 1}}
	}
	write := func(at int, r string, tok int64, n int) history.Event {
		v := fmt.Sprintf("%s#%d", r, n)
		return history.Event{At: ms(at), Kind: history.WriteAccepted, Replica: r, Token: tok, Text: fmt.Sprintf("write %q with token %d accepted", v, tok),
			Facts: &history.Facts{Op: "write", Key: v, Token: tok, Succeeded: true}}
	}
	renew := func(at int, r string) history.Event {
		return history.Event{At: ms(at), Kind: history.LeaseRenewed, Replica: r, TTL: 1, Text: "renewed, TTL 1s"}
	}
	phase := func(at, step int, text string) history.Event {
		return history.Event{At: ms(at), Kind: history.Phase, Step: step, Text: text}
	}
	evs := []history.Event{
		{Kind: history.PartBegins, Text: "fencing on"},
		phase(0, 1, "fencing on: replicas elect an owner that writes every 100 ms with its token"),
		grant(50, "b1"), key(60, "b1", 6, 6, 0x694d7c1e5f2a9b01),
		{At: ms(70), Kind: history.Acquired, Replica: "b1", Token: 6, Text: "became owner with token 6: its key is the oldest (create 6)",
			Facts: &history.Facts{Op: "get", Key: "election-1/694d7c1e5f2a9b01", Revision: 6, Succeeded: true}},
		grant(100, "b3"), key(110, "b3", 7, 7, 0x694d7c1e5f2a9b03),
		grant(150, "b2"), key(160, "b2", 8, 8, 0x694d7c1e5f2a9b07),
	}
	for i := range 8 {
		evs = append(evs, write(200+100*i, "b1", 6, i+1), renew(250+100*i, []string{"b1", "b2", "b3"}[i%3]))
	}
	evs = append(evs,
		phase(1000, 2, "pause owner b1 (token 6) past its TTL"),
		history.Event{At: ms(1050), Kind: history.Paused, Replica: "b1", Origin: history.ByScript, Text: "paused: work and network frozen"},
		renew(1400, "b2"), renew(1450, "b3"), renew(1800, "b2"), renew(1850, "b3"),
		history.Event{At: ms(2100), Kind: history.KeyChanged, Text: "etcd: election-1/694d7c1e5f2a9b01 deleted, it held b1 (revision 9)",
			Facts: &history.Facts{Op: "delete", Key: "election-1/694d7c1e5f2a9b01", Revision: 9, Succeeded: true, Deleted: 1,
				Held: &history.StoreKey{Key: "election-1/694d7c1e5f2a9b01", ModRevision: 9}}},
		history.Event{At: ms(2110), Kind: history.Acquired, Replica: "b3", Token: 7, Text: "became owner with token 7: its key is the oldest (create 7)",
			Facts: &history.Facts{Op: "get", Key: "election-1/694d7c1e5f2a9b03", Revision: 9, Succeeded: true}},
	)
	for i := range 7 {
		evs = append(evs, write(2200+100*i, "b3", 7, i+1), renew(2230+100*i, []string{"b2", "b3"}[i%2]))
	}
	return append(evs,
		phase(2900, 3, "wake b1: it writes with its old token 6"),
		history.Event{At: ms(3000), Kind: history.Resumed, Replica: "b1", Origin: history.ByScript, Text: "resumed, unaware of the time it lost"},
		history.Event{At: ms(3050), Kind: history.WriteRejected, Replica: "b1", Token: 6, Text: `write "b1#9" with token 6 rejected: the resource has seen token 7`,
			Facts: &history.Facts{Op: "write", Key: "b1#9", Token: 6, Highest: 7}},
		history.Event{At: ms(3050), Kind: history.InvariantViolated, Replica: "b1", Token: 6, Text: "two owners at once (b1 wrote): b1 (token 6), b3 (token 7)"},
		write(3100, "b3", 7, 8),
	)
}
