package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// zombieControllerScenario is the scenario zombie-controller, the replay
// of KAFKA-6082 (lesson 13): a replaced controller's queued write.
var zombieControllerScenario = &experiment.Scenario{
	Name:    "zombie-controller",
	Title:   "KAFKA-6082: a replaced controller's queued write",
	Summary: "Two controllers campaign; the winner keeps the partition leaders in etcd. It is paused with a decision waiting in its event queue, the other is elected and decides otherwise, then the first wakes and sends what it had queued: once as a plain Put, once as a Txn that compares its controller key's CreateRevision.",
	Faults:  "pause the controller past its TTL with a write queued",
	// The writes go to etcd's own keys, not to the protected resource.
	DefaultReplicas: 2, MinReplicas: 2, MaxReplicas: 2,
	DefaultTTL: 2,
	Run:        runZombieController,
	Predict:    zombieQuestion,
	Shows: []history.Property{
		{Name: "zombie-overwrote", Part: zombiePart(false), Check: zombieOverwrote},
		{Name: "zombie-refused", Part: zombiePart(true), Check: zombieRefused},
	},
}

// zombieKey is the state key the controllers write: partition p0's leader.
const zombieKey = "state/p0"

func zombiePart(guarded bool) string {
	if guarded {
		return "guarded txn"
	}
	return "plain put"
}

// controller is a replica's controller loop and its event queue, which
// the script fills: each entry is a broker the controller will name as
// p0's leader.
type controller struct {
	r       *experiment.Replica
	queue   chan string
	guarded bool
}

func runZombieController(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	for i, guarded := range []bool{false, true} {
		if err := zombieVariant(ctx, run, guarded, i); err != nil {
			return history.Verdict{}, err
		}
	}
	return history.Verdict{}, nil
}

func zombieVariant(ctx context.Context, run *experiment.Run, guarded bool, round int) error {
	run.Part(zombiePart(guarded))
	run.ResetMonitor()
	prefix := fmt.Sprintf("controller-%d/", round)
	write := "a plain Put"
	if guarded {
		write = "a Txn comparing its controller key's CreateRevision"
	}
	first, second := fmt.Sprintf("c%d", 2*round+1), fmt.Sprintf("c%d", 2*round+2)
	if err := run.Phase(ctx, fmt.Sprintf("%s: %s and %s campaign for controller; the winner writes %s with %s", zombiePart(guarded), first, second, zombieKey, write)); err != nil {
		return err
	}
	cs, err := startControllers(ctx, run, prefix, guarded, first, second)
	if err != nil {
		return err
	}
	if err := run.Phase(ctx, "pause the controller past its TTL; broker b1 fails, and its queue gets: make b2 p0's leader"); err != nil {
		return err
	}
	c1, c2, err := currentController(ctx, run, cs)
	if err != nil {
		return err
	}
	old := c1.r.State().Token
	if err := takeOver(ctx, run, c1, c2); err != nil {
		return err
	}
	if err := run.Phase(ctx, fmt.Sprintf("wake %s: it sends its queued write with token %d", c1.r.Name, old)); err != nil {
		return err
	}
	woke := run.Elapsed()
	c1.r.Resume(history.ByScript)
	if !experiment.WaitFor(ctx, 3*time.Second, func() bool { return wroteSince(run, c1.r.Name, woke) }) {
		return fmt.Errorf("%s never sent its queued write", c1.r.Name)
	}
	if err := noteState(ctx, run); err != nil {
		return err
	}
	run.Announce(zombiePart(guarded) + " is over: the controllers retire")
	for _, c := range cs {
		c.r.Retire()
	}
	return nil
}

// currentController waits for one of cs to be controller and returns it
// and the other: on a loaded machine the first may have lost its lease
// while the script waited at a step.
func currentController(ctx context.Context, run *experiment.Run, cs []*controller) (*controller, *controller, error) {
	var cur, other *controller
	experiment.WaitFor(ctx, run.TTLDuration()+5*time.Second, func() bool {
		for i, c := range cs {
			if c.r.State().Role == experiment.RoleOwner {
				cur, other = c, cs[1-i]
				return true
			}
		}
		return false
	})
	if cur == nil {
		return nil, nil, errors.New("no controller to pause")
	}
	return cur, other, nil
}

// startControllers starts c1, waits until it is controller and has
// written p0's first leader, then starts c2 behind it.
func startControllers(ctx context.Context, run *experiment.Run, prefix string, guarded bool, names ...string) ([]*controller, error) {
	cs := make([]*controller, len(names))
	for i, name := range names {
		r, err := run.NewReplica(name)
		if err != nil {
			return nil, err
		}
		cs[i] = &controller{r: r, queue: make(chan string, 4), guarded: guarded}
	}
	c1 := cs[0]
	c1.queue <- "b1"
	if err := c1.r.Start(c1.loop(prefix)); err != nil {
		return nil, err
	}
	if !experiment.WaitFor(ctx, 5*time.Second, func() bool { return wroteSince(run, c1.r.Name, 0) }) {
		return nil, fmt.Errorf("%s never became controller and wrote %s", c1.r.Name, zombieKey)
	}
	for _, c := range cs[1:] {
		if err := c.r.Start(c.loop(prefix)); err != nil {
			return nil, err
		}
	}
	if !waitQueue(ctx, run, prefix, len(cs)) {
		return nil, errors.New("the controllers never all joined the election")
	}
	return cs, nil
}

// takeOver pauses c1 with a decision queued, waits for c2 to become
// controller, and has c2 write its own decision.
func takeOver(ctx context.Context, run *experiment.Run, c1, c2 *controller) error {
	if err := run.AwaitAny(ctx, []*experiment.Replica{c2.r}, "take over from the paused controller"); err != nil {
		return err
	}
	c1.r.Pause(history.ByScript)
	c1.queue <- "b2"
	c1.r.Emit(history.Event{Kind: history.Note, Text: "its event queue holds: make b2 p0's leader (it cannot act on it while paused)"})
	if !experiment.WaitFor(ctx, run.TTLDuration()+5*time.Second, func() bool { return c2.r.State().Role == experiment.RoleOwner }) {
		return fmt.Errorf("%s never became controller", c2.r.Name)
	}
	since := run.Elapsed()
	c2.queue <- "b3"
	if !experiment.WaitFor(ctx, 3*time.Second, func() bool { return wroteSince(run, c2.r.Name, since) }) {
		return fmt.Errorf("%s never wrote %s", c2.r.Name, zombieKey)
	}
	return nil
}

// wroteSince reports whether the replica's write to the state key was
// answered (accepted or refused) after since.
func wroteSince(run *experiment.Run, name string, since time.Duration) bool {
	for _, e := range run.Events(0) {
		if e.Replica == name && e.At >= since && (e.Kind == history.WriteAccepted || e.Kind == history.WriteRejected) {
			return true
		}
	}
	return false
}

// noteState reads the state key and says what etcd holds.
func noteState(ctx context.Context, run *experiment.Run) error {
	g, err := run.Admin().Get(ctx, zombieKey)
	if err != nil {
		return fmt.Errorf("read %s: %w", zombieKey, err)
	}
	if len(g.Kvs) == 0 {
		run.Note("etcd holds no %s (revision %d)", zombieKey, g.Header.Revision)
		return nil
	}
	kv := experiment.StoreKeyOf(g.Kvs[0])
	run.Emit(history.Event{Kind: history.Note, Text: fmt.Sprintf("etcd's %s now holds %q (written at revision %d)", zombieKey, kv.Value, kv.ModRevision),
		Facts: &history.Facts{Op: "get", Key: zombieKey, Revision: g.Header.Revision, Succeeded: true, Held: &kv}})
	return nil
}

// loop is the controller: take a lease renewed every TTL/3, campaign,
// and once controller write each decision of its queue to the state key;
// when its lease is lost or etcd refuses a write, campaign again. It
// never looks at its lease before a write, as the controller of
// KAFKA-6082 did not: a decision taken off the queue while paused goes
// out as soon as it wakes.
func (c *controller) loop(prefix string) experiment.Body {
	return func(ctx context.Context, r *experiment.Replica) error {
		for ctx.Err() == nil {
			l, tok, f, ok := elect(ctx, r, prefix, "controller")
			if ok {
				c.serve(ctx, l, tok, f.Key)
			}
		}
		return nil
	}
}

// serve writes the queue's decisions until the lease is lost or a
// write refused.
func (c *controller) serve(ctx context.Context, l *experiment.Lease, tok int64, key string) {
	r := c.r
	for {
		select {
		case broker := <-c.queue:
			if r.Checkpoint(ctx) != nil {
				return
			}
			if !c.write(ctx, key, tok, broker) {
				r.Emit(history.Event{Kind: history.SteppedDown, Token: tok, Text: "etcd refused its write: it resigns as controller"})
				r.SetRole(experiment.RoleSteppedDown, 0)
				l.Abandon(ctx)
				return
			}
		case <-l.Lost():
			r.Emit(history.Event{Kind: history.Lost, Token: tok, Text: "lease gone: no longer controller"})
			r.SetRole(experiment.RoleSteppedDown, 0)
			return
		case <-ctx.Done():
			return
		}
	}
}

// elect takes a lease renewed every TTL/3 and campaigns under prefix
// until r is first in line, then records it as the owner (the role named
// role); false when the grant or the campaign failed (after a short
// wait, to be tried again) or ctx ended.
func elect(ctx context.Context, r *experiment.Replica, prefix, role string) (*experiment.Lease, int64, *history.Facts, bool) {
	r.SetRole(experiment.RoleCandidate, 0)
	l, err := r.Grant(ctx, r.Run().TTL(), true)
	if err != nil {
		experiment.Sleep(ctx, 100*time.Millisecond)
		return nil, 0, nil, false
	}
	tok, f, err := campaignFacts(ctx, r, l, prefix, r.Name, nil)
	if err != nil {
		l.Abandon(ctx)
		experiment.Sleep(ctx, 50*time.Millisecond)
		return nil, 0, nil, false
	}
	r.SetRole(experiment.RoleOwner, tok)
	r.Emit(history.Event{Kind: history.Acquired, Token: tok, TTL: l.TTL, Facts: f,
		Text: fmt.Sprintf("became %s with token %d: its key %s is the oldest in line (revision %d)", role, tok, f.Key, f.Revision)})
	return l, tok, f, true
}

// write sends one decision, plain or guarded, and records etcd's answer;
// it reports whether etcd applied it.
func (c *controller) write(ctx context.Context, key string, tok int64, broker string) bool {
	r := c.r
	cli := r.Client()
	if cli == nil {
		return false
	}
	value := fmt.Sprintf("%s (set by %s)", broker, r.Name)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if !c.guarded {
		resp, err := cli.Put(wctx, zombieKey, value)
		if err != nil {
			r.Emit(history.Event{Kind: history.Note, Text: "put " + zombieKey + " failed: " + err.Error()})
			return true
		}
		rev := resp.Header.Revision
		r.Emit(history.Event{Kind: history.WriteAccepted, Token: tok, Text: fmt.Sprintf("put %s = %q with token %d accepted at revision %d (a plain Put compares nothing)", zombieKey, value, tok, rev),
			Facts: &history.Facts{Op: "put", Key: zombieKey, Revision: rev, Succeeded: true, Token: tok}})
		return true
	}
	cmp := clientv3.Compare(clientv3.CreateRevision(key), "=", tok)
	resp, err := cli.Txn(wctx).If(cmp).Then(clientv3.OpPut(zombieKey, value)).Else(clientv3.OpGet(key), clientv3.OpGet(zombieKey)).Commit()
	if err != nil {
		r.Emit(history.Event{Kind: history.Note, Text: "txn on " + zombieKey + " failed: " + err.Error()})
		return true
	}
	facts := &history.Facts{Op: "txn", Key: zombieKey, If: fmt.Sprintf("create_revision(%s) = %d", key, tok), Revision: resp.Header.Revision, Succeeded: resp.Succeeded, Token: tok}
	if resp.Succeeded {
		r.Emit(history.Event{Kind: history.WriteAccepted, Token: tok, Facts: facts,
			Text: fmt.Sprintf("txn put %s = %q if %s: accepted at revision %d", zombieKey, value, facts.If, resp.Header.Revision)})
		return true
	}
	r.Emit(history.Event{Kind: history.WriteRejected, Token: tok, Facts: facts, Text: refusedText(resp, facts, value)})
	return false
}

// refusedText says why etcd refused a guarded write, from its Else reads.
func refusedText(resp *clientv3.TxnResponse, f *history.Facts, value string) string {
	mine, state := resp.Responses[0].GetResponseRange(), resp.Responses[1].GetResponseRange()
	why := "its controller key is gone (create_revision 0)"
	if len(mine.Kvs) > 0 {
		why = fmt.Sprintf("its controller key has create_revision %d", mine.Kvs[0].CreateRevision)
	}
	held := "nothing"
	if len(state.Kvs) > 0 {
		kv := experiment.StoreKeyOf(state.Kvs[0])
		f.Held = &kv
		held = fmt.Sprintf("%q", kv.Value)
	}
	return fmt.Sprintf("txn put %s = %q if %s: rejected, %s; %s still holds %s", zombieKey, value, f.If, why, zombieKey, held)
}

// finalState is the last value etcd's watch saw written to the state key
// in f, and whether it saw one.
func finalState(f *history.Findings) (string, bool) {
	e, ok := f.LastEvent(func(e history.Event) bool {
		return e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Key == zombieKey && e.Facts.Op == "put" && e.Facts.Held != nil
	})
	if !ok {
		return "", false
	}
	return e.Facts.Held.Value, true
}

// zombieOverwrote: a plain Put lets the old controller's queued write
// land over the new controller's.
func zombieOverwrote(f *history.Findings) (bool, string) {
	final, _ := finalState(f)
	for _, w := range f.Stale {
		if w.Accepted {
			return true, fmt.Sprintf("with a plain Put etcd took %s's queued write with token %d after token %d was issued: %s ended as %q, the replaced controller's decision", w.Replica, w.Token, w.Issued, zombieKey, final)
		}
	}
	if len(f.Stale) > 0 {
		return false, fmt.Sprintf("with a plain Put etcd still refused %s's write with token %d", f.Stale[0].Replica, f.Stale[0].Token)
	}
	return false, "with a plain Put no write from a replaced controller reached etcd: " + zombieStory(f)
}

// zombieRefused: the guarded Txn keeps it out.
func zombieRefused(f *history.Findings) (bool, string) {
	final, _ := finalState(f)
	var refused *history.StaleWrite
	for i, w := range f.Stale {
		if w.Accepted {
			return false, fmt.Sprintf("with the guarded Txn etcd still took %s's write with token %d after token %d: %s ended as %q", w.Replica, w.Token, w.Issued, zombieKey, final)
		}
		if refused == nil {
			refused = &f.Stale[i]
		}
	}
	if refused == nil {
		return false, "with the guarded Txn no write from a replaced controller reached etcd: " + zombieStory(f)
	}
	return true, fmt.Sprintf("with the guarded Txn etcd refused %s's write with token %d (the compare on its key failed once token %d was issued), and %s kept %q", refused.Replica, refused.Token, refused.Issued, zombieKey, final)
}

var zombieQuestion = &experiment.Question{
	Prompt: "The paused controller wakes and sends the write it had queued. Across the two parts, in which does the new controller's decision survive in etcd?",
	Options: []experiment.Option{
		{Text: "In both: etcd drops writes from a client whose lease has expired", Happened: zombieSurvives(true, true)},
		{Text: "Only where the write is a Txn comparing the old controller's key", Happened: zombieSurvives(false, true)},
		{Text: "In neither: the old controller's write lands both times", Happened: zombieSurvives(false, false)},
	},
}

// zombieSurvives: the new controller's decision is what etcd's state key
// held at the end of the plain part (plain) and of the guarded one.
func zombieSurvives(plain, guarded bool) func(h *history.History) bool {
	return func(h *history.History) bool {
		p, g := history.Find(h, zombiePart(false)), history.Find(h, zombiePart(true))
		return p != nil && g != nil && newControllerKept(p) == plain && newControllerKept(g) == guarded
	}
}

// newControllerKept: the state key's last value was written by the last
// replica to become controller in f.
func newControllerKept(f *history.Findings) bool {
	last, ok := f.LastEvent(history.KindIs(history.Acquired, ""))
	final, seen := finalState(f)
	return ok && seen && strings.HasSuffix(final, "(set by "+last.Replica+")")
}
