package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// ms is a time into a hand-written history.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func acquired(at int, who string, tok int64, key string) history.Event {
	held := history.StoreKey{Key: key, Value: who, CreateRevision: tok, ModRevision: tok, Version: 1}
	return history.Event{At: ms(at), Kind: history.Acquired, Replica: who, Token: tok, Facts: &history.Facts{Op: "get", Key: key, Held: &held, Succeeded: true}}
}

func stored(at int, op, key, value string, rev int64) history.Event {
	k := history.StoreKey{Key: key, Value: value, CreateRevision: rev, ModRevision: rev, Version: 1}
	return history.Event{At: ms(at), Kind: history.KeyChanged, Facts: &history.Facts{Op: op, Key: key, Revision: rev, Held: &k, Succeeded: true}}
}

func write(at int, who string, tok int64, ok bool) history.Event {
	k := history.WriteRejected
	if ok {
		k = history.WriteAccepted
	}
	return history.Event{At: ms(at), Kind: k, Replica: who, Token: tok, Facts: &history.Facts{Op: "write", Token: tok, Succeeded: ok}}
}

func ev(at int, k history.Kind, who string) history.Event {
	return history.Event{At: ms(at), Kind: k, Replica: who}
}

func TestCheckerTwoOwners(t *testing.T) {
	h := history.History{Scenario: "ttl-unlock-bug", Events: []history.Event{
		stored(0, "put", "lock", "a", 5), acquired(10, "a", 5, "lock"),
		stored(20, "delete", "lock", "", 6),
		stored(30, "put", "lock", "b", 7), acquired(40, "b", 7, "lock"),
		write(50, "a", 5, true),
		ev(60, history.Released, "a"),
	}}
	f := history.Find(&h, "")
	if len(f.TwoOwners) != 1 {
		t.Fatalf("two owners: %+v", f.TwoOwners)
	}
	o := f.TwoOwners[0]
	if o.At != ms(40) || o.Acting != "b" || o.Holder != "b" || len(o.Owners) != 2 {
		t.Errorf("overlap %+v: want at 40ms, made by b, etcd holding b's key", o)
	}
	if len(f.Terms) != 2 || f.Terms[0].Replica != "a" || f.Terms[0].Ended != history.Released || f.Terms[1].Ended != "" {
		t.Errorf("terms %+v", f.Terms)
	}
}

func TestCheckerPausedOwnerDoesNotAct(t *testing.T) {
	h := history.History{Scenario: "fencing", Events: []history.Event{
		acquired(0, "a", 5, "e/a"), ev(10, history.Paused, "a"),
		acquired(20, "b", 8, "e/b"), write(30, "b", 8, true),
		ev(40, history.Resumed, "a"),
	}}
	if f := history.Find(&h, ""); len(f.TwoOwners) != 0 {
		t.Fatalf("a paused owner counted as acting: %+v", f.TwoOwners)
	}
}

func TestCheckerStaleWrites(t *testing.T) {
	h := history.History{Scenario: "fencing", Events: []history.Event{
		{At: 0, Kind: history.PartBegins, Text: "off"},
		acquired(0, "a", 5, "e/a"), ev(10, history.Paused, "a"),
		acquired(20, "b", 8, "e/b"), write(30, "b", 8, true),
		ev(40, history.Resumed, "a"), write(50, "a", 5, true), ev(60, history.Lost, "a"),
		{At: ms(70), Kind: history.PartBegins, Text: "on"},
		acquired(80, "c", 12, "e/c"), write(90, "c", 11, false), write(95, "c", 12, true),
	}}
	off, on := history.Find(&h, "off"), history.Find(&h, "on")
	if len(off.Stale) != 1 || !off.Stale[0].Accepted || off.Stale[0].Token != 5 || off.Stale[0].Issued != 8 {
		t.Errorf("fencing off: stale writes %+v, want a's token 5 accepted after 8", off.Stale)
	}
	if len(off.TwoOwners) != 1 || off.TwoOwners[0].Acting != "a" {
		t.Errorf("the zombie's write after its resume is two owners at once: %+v", off.TwoOwners)
	}
	if len(on.Stale) != 1 || on.Stale[0].Accepted {
		t.Errorf("fencing on: stale writes %+v, want one refused", on.Stale)
	}
	if all := history.Find(&h, ""); len(all.Stale) != 2 {
		t.Errorf("the whole run: %d stale writes, want 2 (tokens count across parts)", len(all.Stale))
	}
}

func TestCheckerGaps(t *testing.T) {
	h := history.History{Scenario: "failover-timing", Events: []history.Event{
		acquired(0, "a", 5, "e/a"), ev(1000, history.Crashed, "a"),
		acquired(2300, "b", 9, "e/b"),
		ev(3000, history.Paused, "b"), acquired(4500, "c", 12, "e/c"),
		ev(5000, history.Resumed, "b"), ev(5100, history.Lost, "b"),
	}}
	f := history.Find(&h, "")
	if len(f.Gaps) != 2 {
		t.Fatalf("gaps %+v, want 2", f.Gaps)
	}
	if g := f.Gaps[0]; g.Length() != ms(1300) || g.After != history.Crashed || g.Replica != "a" {
		t.Errorf("first gap %+v (length %s), want 1.3s after a crashed", g, g.Length())
	}
	if g := f.Gaps[1]; g.Length() != ms(1500) || g.After != history.Paused || g.Replica != "b" {
		t.Errorf("second gap %+v, want 1.5s after b paused", g)
	}
}

func TestCheckerLeaseExtension(t *testing.T) {
	ttl := func(at int, left int64) history.Event {
		return history.Event{At: ms(at), Kind: history.Measured, Facts: &history.Facts{Op: "timetolive", Lease: 7, TTLLeft: left}}
	}
	h := history.History{Scenario: "leader-change", Events: []history.Event{
		ttl(0, 3), ttl(1000, 2), ttl(2000, 1), {At: ms(2100), Kind: history.LeaderMoved}, ttl(2200, 4), ttl(3000, 3),
	}}
	f := history.Find(&h, "")
	if len(f.Extensions) != 1 || f.Extensions[0].Before != 1 || f.Extensions[0].After != 4 {
		t.Errorf("extensions %+v, want one from 1 to 4", f.Extensions)
	}
	renewed := history.History{Scenario: "renewal", Events: []history.Event{
		ttl(0, 1), {At: ms(100), Kind: history.LeaseRenewed, Facts: &history.Facts{Op: "keepalive", Lease: 7}}, ttl(200, 2),
	}}
	if f := history.Find(&renewed, ""); len(f.Extensions) != 0 {
		t.Errorf("a renewal counted as an extension: %+v", f.Extensions)
	}
}

// TestCheckVerdictFromHistory: the verdict is the scenario's properties
// over the history, and a history that does not show the effect is not
// called shown.
func TestCheckVerdictFromHistory(t *testing.T) {
	unlock := func(at int, deleted int64, prev string) history.Event {
		f := &history.Facts{Op: "delete", Key: "lock-naive", Deleted: deleted, Succeeded: true}
		text := "unlock deleted nothing: etcd held no lock-naive at revision 9"
		if deleted > 0 {
			f.Prev = []history.StoreKey{{Key: "lock-naive", Value: prev, CreateRevision: 7}}
			text = "unlock deleted lock-naive, which held P2's lock (created at revision 7, not P1's 5)"
		}
		return history.Event{At: ms(at), Kind: history.Released, Replica: "p1", Facts: f, Text: text}
	}
	no := false
	base := []history.Event{{Kind: history.PartBegins, Text: naivePart}, acquired(0, "p1", 5, "lock-naive"), ev(5, history.Paused, "p1"),
		acquired(20, "p2", 7, "lock-naive"), ev(30, history.Resumed, "p1")}
	shown := history.History{Scenario: "ttl-unlock-bug", Params: history.Params{VersionedUnlock: &no},
		Events: append(append([]history.Event{}, base...), unlock(40, 1, "p2"), acquired(50, "p3", 10, "lock-naive"))}
	if v := Check(&shown, nil); !v.Showed {
		t.Errorf("two owners not recognised: %s", v.Sentence())
	}
	missed := history.History{Scenario: "ttl-unlock-bug", Params: history.Params{VersionedUnlock: &no},
		Events: append(append([]history.Event{}, base...), ev(35, history.Lost, "p2"), unlock(40, 0, ""), acquired(50, "p3", 10, "lock-naive"))}
	if v := Check(&missed, nil); v.Showed {
		t.Errorf("called shown without two owners: %s", v.Sentence())
	}
}

// TestRenewalJudgedByEtcdsAnswers: a renewal etcd answered after the
// replica's own deadline (held up by an election) still shows the lease
// lived, and the summary says how late; only etcd's refusal ends it.
func TestRenewalJudgedByEtcdsAnswers(t *testing.T) {
	part := renewalCases[0].part
	renewed := func(at int, f history.Facts) history.Event {
		f.Op, f.Succeeded, f.GrantedTTL = "keepalive", true, 2
		text := experiment.RenewedText(&f)
		return history.Event{At: ms(at), Kind: history.LeaseRenewed, Replica: "r1", TTL: 2, Text: text, Facts: &f}
	}
	late := renewed(3100, history.Facts{Tries: 6, Overdue: 0.62, Err: "etcdserver: no leader"})
	h := history.History{Scenario: "renewal", Events: []history.Event{
		{At: 0, Kind: history.PartBegins, Text: part},
		renewed(1000, history.Facts{Tries: 1}), late, renewed(4100, history.Facts{Tries: 1}),
	}}
	ok, say := leaseLived(history.Find(&h, part))
	if !ok || !strings.Contains(say, "0.62s after r1's own deadline") || !strings.Contains(say, "no leader") {
		t.Errorf("leaseLived = %v, %q: want the lease lived, the late answer named with what it met", ok, say)
	}
	h.Events = append(h.Events, history.Event{At: ms(5000), Kind: history.LeaseExpired, Replica: "r1", Text: "renewal refused: etcd no longer knows the lease"})
	if ok, say := leaseLived(history.Find(&h, part)); ok || !strings.Contains(say, "no longer knows") {
		t.Errorf("after etcd's refusal leaseLived = %v, %q", ok, say)
	}
}
