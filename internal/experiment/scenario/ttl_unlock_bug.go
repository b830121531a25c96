package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// ttlUnlockBugScenario is the scenario ttl-unlock-bug.
var ttlUnlockBugScenario = &experiment.Scenario{
	Name:            "ttl-unlock-bug",
	Title:           "The TTL unlock bug: naive vs versioned unlock",
	Summary:         "P1 takes a TTL lock it does not renew and is paused past the TTL; P2 takes the free lock and keeps its lease alive; P1 wakes and unlocks; P3 tries the lock. Once with unlock as a plain delete, once with a delete that checks the key's revision.",
	Faults:          "pause P1 past its TTL",
	DefaultReplicas: 3, MinReplicas: 3, MaxReplicas: 3,
	DefaultTTL: 1,
	Run:        runUnlockBug,
	Predict:    unlockQuestion,
	Shows: []history.Property{
		{Name: "two-owners", Part: naivePart, Check: naiveShowsTwoOwners, When: func(p history.Params) bool { return runs(p.VersionedUnlock, false) }},
		{Name: "one-owner", Part: versionedPart, Check: versionedKeepsOneOwner, When: func(p history.Params) bool { return runs(p.VersionedUnlock, true) }},
	},
}

const (
	naivePart     = "naive unlock (plain delete)"
	versionedPart = "versioned unlock (delete only if ModRevision matches)"
)

// ttlLock is the lock of the course's early lessons: a key created with
// compare-and-swap under a lease. Its token is the revision of the write
// that created it. P1's lease is not renewed (that is the bug's cause);
// the other holders keep theirs alive, as a live process would.
type ttlLock struct {
	key   string
	lease *experiment.Lease
	rev   int64
	stop  context.CancelFunc
}

// lockTTL takes key for r on a lease of ttl seconds, renewed when keep.
// It returns the lock when the create-if-absent succeeded, and the facts
// of etcd's answer either way (the key as it was when it failed).
func lockTTL(ctx context.Context, r *experiment.Replica, key string, ttl int64, keep bool) (*ttlLock, *history.Facts, error) {
	if err := r.Await(ctx, "take the lock"); err != nil {
		return nil, nil, err
	}
	lctx, stop := context.WithCancel(ctx)
	l, err := r.Grant(lctx, ttl, keep)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("lock %s: %w", key, err)
	}
	c := experiment.CreateKey{Key: key, Value: r.Name, Lease: l.ID}
	a, err := c.Commit(ctx, r.Client(), r.Run().TryTimeout())
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("lock %s: %w", key, err)
	}
	f := c.Facts(a)
	f.GrantedTTL = l.TTL
	if !a.Succeeded {
		stop()
		l.Abandon(ctx)
		return nil, f, nil
	}
	tl := &ttlLock{key: key, lease: l, rev: a.Revision, stop: stop}
	if keep {
		r.Keep(func() { tl.noticeLoss(lctx, r) })
	}
	return tl, f, nil
}

// noticeLoss steps the holder down when its renewals find the lease gone.
func (tl *ttlLock) noticeLoss(ctx context.Context, r *experiment.Replica) {
	select {
	case <-tl.lease.Lost():
		if r.State().Role == experiment.RoleOwner {
			r.SetRole(experiment.RoleFollower, 0)
			r.Emit(history.Event{Kind: history.Lost, Token: tl.rev, Text: "its lease is gone, so is its lock key: no longer holds the lock"})
		}
	case <-ctx.Done():
	}
}

// release lets the lock go at the end of a part: renewals stop and the
// lease is revoked, which deletes the key if it is still this lock's.
func (tl *ttlLock) release(ctx context.Context) {
	tl.stop()
	tl.lease.Abandon(context.WithoutCancel(ctx))
}

// unlock deletes the key: plainly (naive) or only if it is still the
// write this lock made (versioned). The facts say what etcd deleted.
// An unlock whose answer is lost is checked with a read: while the key
// is still there as the unlock would find it, it is sent again;
// otherwise the facts say what the read found.
func (tl *ttlLock) unlock(ctx context.Context, r *experiment.Replica, versioned bool) (*history.Facts, error) {
	if err := r.Await(ctx, "unlock"); err != nil {
		return nil, err
	}
	perTry := r.Run().TryTimeout()
	var resolved []history.Resolution
	for tries := 1; ; tries++ {
		tctx, cancel := context.WithTimeout(ctx, perTry)
		f, err := tl.unlockOnce(tctx, r.Client(), versioned)
		cancel()
		if err == nil {
			f.Tries, f.Resolved = tries, resolved
			return f, nil
		}
		if ctx.Err() != nil || !experiment.UnknownOutcome(err) {
			return nil, fmt.Errorf("unlock %s: %w", tl.key, err)
		}
		res, _, err := experiment.ReadAfterLoss(ctx, r.Client(), tl.key, err, perTry)
		if err != nil {
			return nil, fmt.Errorf("unlock %s: %w", tl.key, err)
		}
		perTry = experiment.NextTry(perTry)
		resolved = append(resolved, res)
		if res.Held == nil || versioned && res.Held.ModRevision != tl.rev {
			return &history.Facts{Op: "delete", Key: tl.key, Revision: res.Revision, Tries: tries, Resolved: resolved, Held: res.Held}, nil
		}
	}
}

func (tl *ttlLock) unlockOnce(ctx context.Context, cli *clientv3.Client, versioned bool) (*history.Facts, error) {
	if !versioned {
		resp, err := cli.Delete(ctx, tl.key, clientv3.WithPrevKV())
		if err != nil {
			return nil, err
		}
		f := &history.Facts{Op: "delete", Key: tl.key, Revision: resp.Header.Revision, Succeeded: true, Deleted: resp.Deleted}
		for _, kv := range resp.PrevKvs {
			f.Prev = append(f.Prev, experiment.StoreKeyOf(kv))
		}
		return f, nil
	}
	resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(tl.key), "=", tl.rev)).
		Then(clientv3.OpDelete(tl.key, clientv3.WithPrevKV())).Else(clientv3.OpGet(tl.key)).Commit()
	if err != nil {
		return nil, err
	}
	f := &history.Facts{Op: "txn", Key: tl.key, If: fmt.Sprintf("mod_revision(%s) = %d", tl.key, tl.rev), Revision: resp.Header.Revision, Succeeded: resp.Succeeded}
	if resp.Succeeded {
		d := resp.Responses[0].GetResponseDeleteRange()
		f.Deleted = d.Deleted
		for _, kv := range d.PrevKvs {
			f.Prev = append(f.Prev, experiment.StoreKeyOf(kv))
		}
	} else if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		kv := experiment.StoreKeyOf(kvs[0])
		f.Held = &kv
	}
	return f, nil
}

func runUnlockBug(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	ps := make([]*experiment.Replica, 3)
	for i := range ps {
		r, err := run.NewReplica(fmt.Sprintf("p%d", i+1))
		if err != nil {
			return history.Verdict{}, fmt.Errorf("set up: %w", err)
		}
		ps[i] = r
	}
	for _, versioned := range variants(run.Params.VersionedUnlock) {
		if err := unlockVariant(ctx, run, ps, versioned); err != nil {
			return history.Verdict{}, err
		}
	}
	return history.Verdict{}, nil
}

func unlockVariant(ctx context.Context, run *experiment.Run, ps []*experiment.Replica, versioned bool) error {
	key, part := "lock-naive", naivePart
	if versioned {
		key, part = "lock-versioned", versionedPart
	}
	run.Part(part)
	p1, p2, p3 := ps[0], ps[1], ps[2]
	// Taking the lock and the pause are one step: P1's lease is not
	// renewed, so a learner reading between them would let it run out
	// while P1 is still working, another story.
	if err := run.Phase(ctx, part+": P1 takes the lock (not renewed) and is paused at once"); err != nil {
		return err
	}
	l1, err := takeTTLLock(ctx, p1, key, run.TTL(), false)
	if err != nil {
		return err
	}
	if l1 == nil {
		return fmt.Errorf("%s: P1 could not take the free lock %s", part, key)
	}
	p1.Pause(history.ByScript)
	if err := awaitExpiry(ctx, run, p1, l1); err != nil {
		return err
	}
	if err := run.Phase(ctx, "P2 takes the free lock and keeps its lease alive"); err != nil {
		return err
	}
	l2, err := takeTTLLock(ctx, p2, key, run.TTL(), true)
	if err != nil {
		return err
	}
	if err := run.Phase(ctx, "P1 wakes up, believes it still holds the lock, and unlocks"); err != nil {
		return err
	}
	p1.Resume(history.ByScript)
	f, err := l1.unlock(ctx, p1, versioned)
	if err != nil {
		return fmt.Errorf("%s: P1's unlock: %w", part, err)
	}
	p1.SetRole(experiment.RoleFollower, 0)
	p1.Emit(history.Event{Kind: history.Released, Token: l1.rev, Facts: f, Text: unlockText(f, l1.rev)})
	if err := run.Phase(ctx, "P3 tries the lock"); err != nil {
		return err
	}
	l3, err := takeTTLLock(ctx, p3, key, run.TTL(), true)
	if err != nil {
		return err
	}
	if err := run.Phase(ctx, "this variant is over: P2 and P3 let go"); err != nil {
		return err
	}
	for i, l := range []*ttlLock{l2, l3} {
		letGo(ctx, []*experiment.Replica{p2, p3}[i], l)
	}
	if _, err := run.Admin().Delete(ctx, key); err != nil {
		return fmt.Errorf("%s: clean up: %w", part, err)
	}
	return nil
}

// takeTTLLock is lockTTL with the replica's events: owner with the
// token etcd's answer gave, or told who holds the key.
func takeTTLLock(ctx context.Context, r *experiment.Replica, key string, ttl int64, keep bool) (*ttlLock, error) {
	l, f, err := lockTTL(ctx, r, key, ttl, keep)
	if err != nil {
		return nil, fmt.Errorf("%s takes %s: %w", r.Name, key, err)
	}
	renewed := "not renewed"
	if keep {
		renewed = "kept alive"
	}
	if l == nil {
		text := fmt.Sprintf("lock is held: create_revision(%s) = 0 failed at revision %d", key, f.Revision)
		if f.Held != nil {
			text = fmt.Sprintf("lock is held: %s holds %s (created at revision %d), so it waits", key, f.Held.Value, f.Held.CreateRevision)
		}
		text += experiment.ResolvedText(f.Resolved)
		r.Emit(history.Event{Kind: history.Note, Facts: f, Text: text})
		return nil, nil
	}
	r.SetRole(experiment.RoleOwner, l.rev)
	r.Emit(history.Event{Kind: history.Acquired, Token: l.rev, TTL: f.GrantedTTL, Facts: f,
		Text: fmt.Sprintf("locked %s at revision %d (lease %x, %s, %s)%s", key, l.rev, f.Lease, history.TTLLabel(f.GrantedTTL), renewed, experiment.ResolvedText(f.Resolved))})
	return l, nil
}

// awaitExpiry waits, as the script, until etcd no longer has P1's lock
// key, and says what etcd answered about its lease.
func awaitExpiry(ctx context.Context, run *experiment.Run, p1 *experiment.Replica, l1 *ttlLock) error {
	// A leader change on the way restarts the lease's TTL, and adds an
	// election timeout: etcd may take that much longer to delete it.
	gone := experiment.WaitFor(ctx, 2*run.TTLDuration()+run.ElectionWait()+3*time.Second, func() bool {
		g, err := run.Admin().Get(ctx, l1.key)
		return err == nil && len(g.Kvs) == 0
	})
	if !gone {
		return fmt.Errorf("P1's lock %s was never deleted by etcd", l1.key)
	}
	ttl, err := run.Admin().TimeToLive(ctx, l1.lease.ID)
	f := &history.Facts{Op: "timetolive", Lease: int64(l1.lease.ID), Succeeded: err == nil}
	switch {
	case err != nil:
		f.Err = err.Error()
		run.Emit(history.Event{Kind: history.Note, Facts: f, Text: "the lock key is gone; etcd did not say what became of P1's lease: " + err.Error()})
	case ttl.TTL < 0:
		f.TTLLeft = -1
		run.Emit(history.Event{Kind: history.Note, Facts: f, Text: fmt.Sprintf("the lock key is gone: etcd no longer knows P1's lease %x (it expired while P1 was paused)", int64(l1.lease.ID))})
	default:
		f.TTLLeft = ttl.TTL
		run.Emit(history.Event{Kind: history.Note, Facts: f, Text: fmt.Sprintf("the lock key is gone, though P1's lease %x has %ds left", int64(l1.lease.ID), ttl.TTL)})
	}
	return nil
}

// letGo ends a holder's part: it releases its lock, if it believes it
// holds one, saying so.
func letGo(ctx context.Context, r *experiment.Replica, l *ttlLock) {
	if l == nil {
		return
	}
	if r.State().Role == experiment.RoleOwner {
		r.SetRole(experiment.RoleFollower, 0)
		r.Emit(history.Event{Kind: history.Released, Token: l.rev, Text: fmt.Sprintf("lets go: revokes its lease %x", int64(l.lease.ID))})
	}
	l.release(ctx)
}

// unlockText says what P1's unlock did, from etcd's answer (or, when
// the answer was lost, from the read that followed).
func unlockText(f *history.Facts, mine int64) string {
	switch {
	case f.Deleted > 0 && len(f.Prev) > 0 && f.Prev[0].CreateRevision != mine:
		return fmt.Sprintf("unlock deleted %s, which held %s's lock (created at revision %d, not P1's %d)", f.Key, upper(f.Prev[0].Value), f.Prev[0].CreateRevision, mine)
	case f.Deleted > 0:
		return fmt.Sprintf("unlock deleted %s (its own lock, revision %d)", f.Key, mine)
	case f.Op == "delete" && len(f.Resolved) > 0 && !f.Succeeded:
		return lostUnlockText(f)
	case f.Op == "delete":
		return fmt.Sprintf("unlock deleted nothing: etcd held no %s at revision %d", f.Key, f.Revision)
	case f.Held != nil:
		return fmt.Sprintf("unlock was refused: %s's ModRevision is %d, not %d (it holds %s's lock)", f.Key, f.Held.ModRevision, mine, upper(f.Held.Value))
	}
	return fmt.Sprintf("unlock was refused: etcd held no %s at revision %d", f.Key, f.Revision)
}

// lostUnlockText: the unlock's answer was lost and the read after it no
// longer found the key as the unlock would have.
func lostUnlockText(f *history.Facts) string {
	r := f.Resolved[len(f.Resolved)-1]
	if r.Held == nil {
		return fmt.Sprintf("unlock's answer was lost (%s); a read at revision %d found no %s: removed by this unlock or before it", r.Err, r.Revision, f.Key)
	}
	return fmt.Sprintf("unlock's answer was lost (%s); a read at revision %d found %s held by %s (ModRevision %d), so it did not send it again", r.Err, r.Revision, f.Key, upper(r.Held.Value), r.Held.ModRevision)
}

// naiveShowsTwoOwners: with a plain delete, P1's unlock removes the
// next holder's key and P3 takes the lock while that holder still
// believes it has it.
func naiveShowsTwoOwners(f *history.Findings) (bool, string) {
	unlock, ok := f.LastEvent(history.KindIs(history.Released, "p1"))
	if !ok || unlock.Facts == nil {
		return false, "with a plain delete, P1 never unlocked"
	}
	if len(f.TwoOwners) > 0 {
		o := f.TwoOwners[len(f.TwoOwners)-1]
		return true, fmt.Sprintf("with a plain delete, P1's %s; then %s took the lock: two owners at once, %s, while etcd held %s's key",
			unlock.Text, upper(o.Acting), strings.Join(o.Owners, " and "), holderName(o.Holder))
	}
	return false, "with a plain delete, " + whyNoSecondOwner(f, unlock)
}

// versionedKeepsOneOwner: the versioned unlock is refused and nobody
// else gets the lock while its holder keeps it.
func versionedKeepsOneOwner(f *history.Findings) (bool, string) {
	unlock, ok := f.LastEvent(history.KindIs(history.Released, "p1"))
	if !ok || unlock.Facts == nil {
		return false, "with the versioned unlock, P1 never unlocked"
	}
	if len(f.TwoOwners) > 0 {
		o := f.TwoOwners[0]
		return false, fmt.Sprintf("with the versioned unlock there were still two owners at once: %s", strings.Join(o.Owners, " and "))
	}
	if unlock.Facts.Succeeded {
		return false, "with the versioned unlock, " + whyNoSecondOwner(f, unlock)
	}
	return true, fmt.Sprintf("with the versioned unlock, P1's %s, and there was never more than one owner", unlock.Text)
}

// whyNoSecondOwner says, from the history, why the part had no two
// owners at once: what became of P2's key before P1's unlock, or why P2
// no longer believed it held the lock when P3 took it.
func whyNoSecondOwner(f *history.Findings, unlock history.Event) string {
	out := "P1's " + unlock.Text
	p2, ok := f.FirstEvent(history.KindIs(history.Acquired, "p2"))
	if !ok {
		out = "P2 never held the lock, so " + out
	} else if gone := p2KeyGoneBefore(f, p2, unlock); gone != "" {
		out = gone + ", so " + out
	}
	p3, ok := f.FirstEvent(history.KindIs(history.Acquired, "p3"))
	if !ok {
		return out + "; P3 did not get the lock"
	}
	out += fmt.Sprintf("; P3 then took the free lock at revision %d", p3.Token)
	if left := p2LeftBefore(f, p3.At); left != "" {
		return out + ", when P2 no longer believed it held it: " + left
	}
	return out + ", but nobody else believed it held it"
}

// p2KeyGoneBefore says how P2's key went before P1's unlock ("" when it
// was still there: P1's unlock found it). Revisions decide "before", not
// the events' times: the watch can report the delete P1's own unlock
// made before the unlock's answer is recorded.
func p2KeyGoneBefore(f *history.Findings, p2, unlock history.Event) string {
	if u := unlock.Facts; u.Deleted > 0 || u.Held != nil && u.Held.Value == "p2" {
		return ""
	}
	if lost, ok := f.FirstEvent(func(e history.Event) bool {
		return e.Kind == history.LeaseExpired && e.Replica == "p2" && e.At < unlock.At
	}); ok {
		return fmt.Sprintf("P2's lease was gone before P1 unlocked (%.1fs into the run, in step %d: %s)%s", lost.At.Seconds(), lost.Step, lost.Text, learnerFaultOn(f, "p2", lost.At))
	}
	if del, ok := f.LastEvent(func(e history.Event) bool {
		return e.Kind == history.KeyChanged && e.Facts != nil && e.Facts.Op == "delete" && e.Facts.Revision > p2.Token && e.Facts.Revision <= unlock.Facts.Revision
	}); ok {
		return fmt.Sprintf("etcd had already deleted P2's key (revision %d) before P1 unlocked%s", del.Facts.Revision, learnerFaultOn(f, "p2", del.At))
	}
	return ""
}

// p2LeftBefore says what ended P2's belief that it held the lock before
// at: its crash, the loss it noticed or its own release ("" when it
// still believed it did).
func p2LeftBefore(f *history.Findings, at time.Duration) string {
	e, ok := f.LastEvent(func(e history.Event) bool {
		return e.Replica == "p2" && e.At <= at && (e.Kind == history.Acquired || e.Kind == history.Crashed || e.Kind == history.Lost || e.Kind == history.Released || e.Kind == history.SteppedDown)
	})
	if !ok || e.Kind == history.Acquired {
		return ""
	}
	return fmt.Sprintf("at %.1fs it %s%s", e.At.Seconds(), faultWords(e), yourKey(e))
}

// learnerFaultOn names the learner's last fault on replica r before at
// (a pause, crash, cut or clock change; not the key that undid one), the
// likely cause of what the sentence says: ", after you paused P2 at
// 31.0s". "" when the learner did none.
func learnerFaultOn(f *history.Findings, r string, at time.Duration) string {
	verbs := map[history.Kind]string{history.Crashed: "crashed", history.Paused: "paused", history.Partitioned: "cut off", history.ClockChanged: "changed the clock of"}
	e, ok := f.LastEvent(func(e history.Event) bool {
		return e.Replica == r && e.At <= at && verbs[e.Kind] != "" && e.Origin == history.ByLearner
	})
	if !ok {
		return ""
	}
	verb := verbs[e.Kind]
	return fmt.Sprintf(", after you %s %s at %.1fs", verb, upper(r), e.At.Seconds())
}

// faultWords is what happened to a replica, in a few words.
func faultWords(e history.Event) string {
	switch e.Kind {
	case history.Crashed:
		return "crashed"
	case history.Paused:
		return "was paused"
	case history.Partitioned:
		return "was cut off"
	case history.Lost:
		return "noticed its lock was gone"
	case history.Released, history.SteppedDown:
		return "let the lock go"
	}
	return strings.TrimSpace(e.Text)
}

// yourKey marks a fault the learner made.
func yourKey(e history.Event) string {
	if e.Kind.IsFault() && e.Origin == history.ByLearner {
		return " (your key)"
	}
	return ""
}

func holderName(h string) string {
	if h == "" {
		return "neither"
	}
	return upper(h)
}

// upper writes a replica's name as the scenario's story does: "P2".
func upper(name string) string { return strings.ToUpper(name) }
