package scenario

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// partitionedPrimaryScenario is the scenario partitioned-primary, the
// replay of GitHub's 21 October 2018 incident (lesson 13): a primary cut
// off from the coordinator keeps writing while a standby is promoted.
var partitionedPrimaryScenario = &experiment.Scenario{
	Name:     "partitioned-primary",
	Resource: true,
	Title:    "GitHub, October 2018: a cut-off primary that keeps writing",
	Summary:  "A primary elected through etcd writes to the resource every 100 ms; a standby waits. The primary is cut off from etcd while its link to the resource stays up, and the standby is promoted when its lease runs out. Three times: the primary ignoring its lease, the primary keeping a local deadline (its link to the resource stalls with a write in flight), and that with a resource that checks tokens.",
	Faults:   "cut the primary off from etcd; stall its link to the resource",
	// Two is the story: the primary and one standby.
	DefaultReplicas: 2, MinReplicas: 2, MaxReplicas: 5,
	DefaultTTL: 2,
	MinTTL:     2, // the local deadline leaves a quarter TTL before etcd lets go
	Run:        runPartitionedPrimary,
	Predict:    partitionedQuestion,
	Shows: []history.Property{
		{Name: "two-primaries", Part: primaryParts[0].name, Check: twoPrimaries},
		{Name: "in-flight-landed", Part: primaryParts[1].name, Check: inFlightLanded},
		{Name: "in-flight-refused", Part: primaryParts[2].name, Check: inFlightRefused},
	},
}

// primaryPart is one variant: whether the primary keeps a local deadline
// on its lease, and whether the resource checks tokens.
type primaryPart struct {
	name         string
	lease, fence bool
}

var primaryParts = []primaryPart{
	{name: "no lease, no fence"},
	{name: "lease on the primary", lease: true},
	{name: "fenced", lease: true, fence: true},
}

func runPartitionedPrimary(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	for i, p := range primaryParts {
		if err := primaryVariant(ctx, run, p, i); err != nil {
			return history.Verdict{}, err
		}
	}
	return history.Verdict{}, nil
}

// dbLink is a primary's link to the resource: a write waits while it is
// stalled and lands when it recovers.
type dbLink struct {
	mu   sync.Mutex
	open chan struct{} // closed while writes go through
}

func newDBLink() *dbLink {
	l := &dbLink{open: make(chan struct{})}
	close(l.open)
	return l
}

func (l *dbLink) stall() {
	l.mu.Lock()
	l.open = make(chan struct{})
	l.mu.Unlock()
}

func (l *dbLink) recover() {
	l.mu.Lock()
	close(l.open)
	l.mu.Unlock()
}

// write sends one write over the link and waits for the resource's
// answer; false when ctx ended first.
func (l *dbLink) write(ctx context.Context, r *experiment.Replica, tok int64, value string) bool {
	l.mu.Lock()
	open := l.open
	l.mu.Unlock()
	select {
	case <-open:
	default:
		r.Emit(history.Event{Kind: history.Note, Token: tok, Text: fmt.Sprintf("sent write %q with token %d; the stalled link holds it in flight", value, tok)})
		select {
		case <-open:
		case <-ctx.Done():
			return false
		}
	}
	r.Run().Resource().Write(r, tok, value)
	return true
}

func primaryVariant(ctx context.Context, run *experiment.Run, p primaryPart, round int) error {
	run.Part(p.name)
	run.ResetMonitor()
	res := run.NewResource(p.fence)
	prefix := fmt.Sprintf("primary-%d/", round)
	if err := run.Phase(ctx, fmt.Sprintf("%s: the replicas elect a primary that writes every 100 ms with its token", p.name)); err != nil {
		return err
	}
	rs := make([]*experiment.Replica, run.Params.Replicas)
	links := map[*experiment.Replica]*dbLink{}
	for i := range rs {
		r, err := run.NewReplica(fmt.Sprintf("%c%d", 'a'+round, i+1))
		if err != nil {
			return err
		}
		rs[i], links[r] = r, newDBLink()
	}
	body := func(r *experiment.Replica) experiment.Body { return primaryLoop(prefix, links[r], p.lease) }
	if err := startPrimaries(ctx, run, rs, body, prefix); err != nil {
		return err
	}
	// Let the primary's writes be seen going through first.
	experiment.WaitFor(ctx, 2*time.Second, func() bool { return res.State().Accepted >= 2 })
	cut := "cut the primary off from etcd; its link to the resource stays up"
	if p.lease {
		cut = "cut the primary off from etcd; its link to the resource stalls with its next write in flight"
	}
	if err := run.Phase(ctx, cut); err != nil {
		return err
	}
	primary, standbys, err := currentPrimary(ctx, run, rs)
	if err != nil {
		return err
	}
	link := links[primary]
	if err := run.AwaitAny(ctx, standbys, "take over from the cut-off primary"); err != nil {
		return err
	}
	if p.lease {
		link.stall()
	}
	primary.Partition(history.ByScript)
	successor, err := awaitSuccessor(ctx, run, standbys, res)
	if err != nil {
		return err
	}
	if !p.lease {
		// Both sides write now; give the cut-off one a write after the
		// standby's.
		experiment.WaitFor(ctx, 2*time.Second, func() bool { return res.State().Writer == primary.Name })
	} else {
		if err := run.Phase(ctx, fmt.Sprintf("%s's link to the resource recovers: the write it held lands", primary.Name)); err != nil {
			return err
		}
		since := run.Elapsed()
		link.recover()
		experiment.WaitFor(ctx, 2*time.Second, func() bool { return wroteSince(run, primary.Name, since) })
	}
	run.Announce(fmt.Sprintf("%s is over (%s is primary): heal %s's network, the replicas retire", p.name, successor.Name, primary.Name))
	primary.Heal(history.ByScript)
	for _, r := range rs {
		r.Retire()
	}
	return nil
}

// currentPrimary waits for one of rs to be primary and returns it and the
// others: on a loaded machine the first may have lost its lease while the
// script waited at a step.
func currentPrimary(ctx context.Context, run *experiment.Run, rs []*experiment.Replica) (*experiment.Replica, []*experiment.Replica, error) {
	var cur *experiment.Replica
	experiment.WaitFor(ctx, run.TTLDuration()+5*time.Second, func() bool {
		for _, r := range rs {
			if r.State().Role == experiment.RoleOwner {
				cur = r
				return true
			}
		}
		return false
	})
	if cur == nil {
		return nil, nil, errors.New("no primary to cut off")
	}
	var others []*experiment.Replica
	for _, r := range rs {
		if r != cur {
			others = append(others, r)
		}
	}
	return cur, others, nil
}

// startPrimaries starts the first replica, waits until it is primary,
// then the standbys behind it.
func startPrimaries(ctx context.Context, run *experiment.Run, rs []*experiment.Replica, body func(*experiment.Replica) experiment.Body, prefix string) error {
	if err := rs[0].Start(body(rs[0])); err != nil {
		return err
	}
	if !experiment.WaitFor(ctx, 3*time.Second, func() bool { return rs[0].State().Role == experiment.RoleOwner }) {
		return fmt.Errorf("%s never became primary", rs[0].Name)
	}
	for _, r := range rs[1:] {
		if err := r.Start(body(r)); err != nil {
			return err
		}
	}
	if !waitQueue(ctx, run, prefix, len(rs)) {
		return errors.New("the replicas never all joined the election")
	}
	return nil
}

// awaitSuccessor waits for a standby to be promoted and to write.
func awaitSuccessor(ctx context.Context, run *experiment.Run, standbys []*experiment.Replica, res *experiment.Resource) (*experiment.Replica, error) {
	var next *experiment.Replica
	experiment.WaitFor(ctx, run.TTLDuration()+5*time.Second, func() bool {
		for _, r := range standbys {
			if r.State().Role == experiment.RoleOwner {
				next = r
				return true
			}
		}
		return false
	})
	if next == nil {
		return nil, errors.New("no standby was promoted")
	}
	tok := next.State().Token
	if !experiment.WaitFor(ctx, 2*time.Second, func() bool { return res.State().Highest >= tok }) {
		return nil, fmt.Errorf("%s never wrote as primary", next.Name)
	}
	return next, nil
}

// primaryLoop is a primary: take a lease renewed every TTL/3, campaign,
// and once primary write to the resource every 100 ms over link, one
// write at a time. With lease, a watchdog stops it acting once its own
// clock says less than a quarter TTL is left since the last answered
// renewal was sent (a write already sent still goes on to the resource),
// and it campaigns again. Without, it never looks at its lease and
// writes until it is stopped.
func primaryLoop(prefix string, link *dbLink, lease bool) experiment.Body {
	return func(ctx context.Context, r *experiment.Replica) error {
		for ctx.Err() == nil {
			if l, tok, _, ok := elect(ctx, r, prefix, "primary"); ok {
				servePrimary(ctx, r, l, tok, link, lease)
			}
		}
		return nil
	}
}

func servePrimary(ctx context.Context, r *experiment.Replica, l *experiment.Lease, tok int64, link *dbLink, lease bool) {
	acting := make(chan struct{})
	if lease {
		r.Keep(func() { watchDeadline(ctx, r, l, tok, acting) })
	}
	for n := 1; ; n++ {
		if r.Sleep(ctx, 100*time.Millisecond) != nil {
			return
		}
		select {
		case <-acting:
			return
		default:
		}
		if !link.write(ctx, r, tok, fmt.Sprintf("%s#%d", r.Name, n)) {
			return
		}
	}
}

// watchDeadline closes stop, and says so, once less than a quarter of the
// TTL is left by the replica's own clock.
func watchDeadline(ctx context.Context, r *experiment.Replica, l *experiment.Lease, tok int64, stop chan struct{}) {
	quarter := time.Duration(l.TTL) * time.Second / 4
	for l.Left() >= quarter {
		if r.Sleep(ctx, 20*time.Millisecond) != nil {
			return
		}
	}
	r.Emit(history.Event{Kind: history.SteppedDown, Token: tok, Text: fmt.Sprintf("local deadline: its lease has %s by its own clock; it stops acting as primary", history.LeftLabel(l.Left()))})
	r.SetRole(experiment.RoleSteppedDown, 0)
	close(stop)
	l.Abandon(ctx)
}

// twoPrimaries: with no lease and no fence both sides write, and the
// resource takes the old primary's writes after the new token.
func twoPrimaries(f *history.Findings) (bool, string) {
	taken := 0
	var first *history.StaleWrite
	for i, w := range f.Stale {
		if w.Accepted {
			taken++
			if first == nil {
				first = &f.Stale[i]
			}
		}
	}
	if len(f.TwoOwners) == 0 || first == nil {
		return false, fmt.Sprintf("with no lease and no fence the checker found %d moments of two primaries and %d stale writes taken: %s", len(f.TwoOwners), taken, zombieStory(f))
	}
	o := f.TwoOwners[0]
	held := "neither's key"
	if o.Holder != "" {
		held = o.Holder + "'s key"
	}
	return true, fmt.Sprintf("with no lease and no fence %s acted as primary at once while etcd held %s, and the resource took %d of %s's writes with token %d after token %d was issued", joinAnd(o.Owners), held, taken, first.Replica, first.Token, first.Issued)
}

// inFlightLanded: the local deadline ends the primary's term before the
// standby's begins, but the write it had in flight still lands.
func inFlightLanded(f *history.Findings) (bool, string) {
	if len(f.TwoOwners) > 0 {
		return false, fmt.Sprintf("with a lease on the primary two primaries still acted at once: %s", joinAnd(f.TwoOwners[0].Owners))
	}
	gap := deadlineLead(f)
	for _, w := range f.Stale {
		if w.Accepted {
			return gap != "", fmt.Sprintf("with a lease on the primary %s stopped by its own deadline%s, so there were never two primaries; but its write in flight landed after token %d was issued, and the resource took it (token %d)", w.Replica, gap, w.Issued, w.Token)
		}
	}
	return false, "with a lease on the primary no stale write was taken: " + zombieStory(f)
}

// deadlineLead says how long before the successor's term the first
// primary stepped down by its deadline ("" if it did not, first).
func deadlineLead(f *history.Findings) string {
	if len(f.Terms) < 2 || f.Terms[0].Ended != history.SteppedDown || f.Terms[0].To > f.Terms[1].From {
		return ""
	}
	return fmt.Sprintf(" %.2fs before %s took over", (f.Terms[1].From - f.Terms[0].To).Seconds(), f.Terms[1].Replica)
}

// inFlightRefused: the fenced resource refuses that write.
func inFlightRefused(f *history.Findings) (bool, string) { return staleWriteRefused(f) }

// joinAnd joins names as "a, b and c".
func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return "nobody"
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1 : len(names)-1] {
		out += ", " + n
	}
	return out + " and " + names[len(names)-1]
}

var partitionedQuestion = &experiment.Question{
	Prompt: "Second part: the primary stops at its own deadline, before the standby is promoted, but one write of its was already on the way. Once its link to the resource recovers, what does the resource do with that write?",
	Options: []experiment.Option{
		{Text: "Takes it, on top of the new primary's writes", Happened: inPart(primaryParts[1].name, func(f *history.Findings) bool {
			return slices.ContainsFunc(f.Stale, func(w history.StaleWrite) bool { return w.Accepted })
		})},
		{Text: "Refuses it: the primary had already stopped", Happened: inPart(primaryParts[1].name, func(f *history.Findings) bool {
			return slices.ContainsFunc(f.Stale, func(w history.StaleWrite) bool { return !w.Accepted })
		})},
		{Text: "Never sees it: a stopped primary's writes are dropped", Happened: inPart(primaryParts[1].name, func(f *history.Findings) bool { return len(f.Stale) == 0 })},
	},
}
