package experiment

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ttlUnlockBugScenario is the scenario ttl-unlock-bug.
var ttlUnlockBugScenario = &Scenario{
	Name:            "ttl-unlock-bug",
	Title:           "The TTL unlock bug: naive vs versioned unlock",
	Summary:         "P1 holds a TTL lock, pauses past the TTL, P2 takes the lock, P1 wakes and unlocks, P3 locks. With a plain delete P2 and P3 both own the lock; with an unlock that checks the key's revision, P1's unlock fails and P3 waits.",
	Faults:          "pause P1 past its TTL",
	DefaultReplicas: 3, MinReplicas: 3, MaxReplicas: 3,
	DefaultTTL: 1,
	Run:        runUnlockBug,
}

// ttlLock is the lock of the course's early lessons: a key created with
// compare-and-swap under a lease that nobody renews. Its token is the
// revision of the write that created it.
type ttlLock struct {
	key   string
	lease clientv3.LeaseID
	rev   int64
}

func lockTTL(ctx context.Context, r *Replica, key string, ttl int64) (*ttlLock, bool, error) {
	if err := r.await(ctx, "take the lock"); err != nil {
		return nil, false, err
	}
	l, err := r.Grant(ctx, ttl, false)
	if err != nil {
		return nil, false, err
	}
	resp, err := r.Client().Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, r.Name, clientv3.WithLease(l.ID))).Commit()
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", key, err)
	}
	return &ttlLock{key: key, lease: l.ID, rev: resp.Header.Revision}, resp.Succeeded, nil
}

// unlock deletes the key: plainly (naive) or only if it is still the
// write this lock made (versioned). It reports whether a key was deleted.
func (tl *ttlLock) unlock(ctx context.Context, r *Replica, versioned bool) (bool, error) {
	if err := r.await(ctx, "unlock"); err != nil {
		return false, err
	}
	if !versioned {
		resp, err := r.Client().Delete(ctx, tl.key)
		if err != nil {
			return false, err
		}
		return resp.Deleted > 0, nil
	}
	resp, err := r.Client().Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(tl.key), "=", tl.rev)).
		Then(clientv3.OpDelete(tl.key)).Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}

func runUnlockBug(ctx context.Context, run *Run) (Verdict, error) {
	ps := make([]*Replica, 3)
	for i := range ps {
		r, err := run.newReplica(fmt.Sprintf("p%d", i+1))
		if err != nil {
			return Verdict{}, err
		}
		ps[i] = r
	}
	v := Verdict{Showed: true, Figures: map[string]float64{}}
	var summary []string
	for _, versioned := range variants(run.Params.VersionedUnlock) {
		name := "naive unlock (plain delete)"
		if versioned {
			name = "versioned unlock (delete only if ModRevision matches)"
		}
		run.resetMonitor()
		owners, err := unlockVariant(ctx, run, ps, versioned, name)
		if err != nil {
			return Verdict{}, err
		}
		two, _ := run.violations()
		key := "naive"
		if versioned {
			key = "versioned"
		}
		v.Figures[key+"_owners_at_end"] = float64(owners)
		v.Figures[key+"_violations"] = float64(two)
		if versioned {
			v.Showed = v.Showed && two == 0 && owners == 1
			summary = append(summary, fmt.Sprintf("versioned unlock: P1's unlock failed, P3 did not get the lock, %d owner(s) and no violation", owners))
		} else {
			v.Showed = v.Showed && two > 0 && owners == 2
			summary = append(summary, fmt.Sprintf("naive unlock: P1 deleted P2's lock and P3 took it, %d owners at once", owners))
		}
	}
	v.Summary = joinSentences(summary)
	if !v.Showed {
		v.Summary = "Unexpected outcome: " + v.Summary
	}
	return v, nil
}

func unlockVariant(ctx context.Context, run *Run, ps []*Replica, versioned bool, name string) (int, error) {
	key := "lock-naive"
	if versioned {
		key = "lock-versioned"
	}
	p1, p2, p3 := ps[0], ps[1], ps[2]
	if err := run.Phase(ctx, name+": P1 takes the lock"); err != nil {
		return 0, err
	}
	l1, ok, err := lockTTL(ctx, p1, key, run.TTL())
	if err != nil || !ok {
		return 0, fmt.Errorf("P1 could not lock: %v", err)
	}
	p1.setRole(RoleOwner, l1.rev)
	p1.Emit(Event{Kind: Acquired, Token: l1.rev, Text: fmt.Sprintf("locked %s (revision %d, %s, not renewed)", key, l1.rev, TTLLabel(run.TTL()))})

	if err := run.Phase(ctx, "P1 pauses past its TTL; etcd expires the lock"); err != nil {
		return 0, err
	}
	p1.pause(ByScript)
	gone := waitFor(ctx, run.tTLDuration()+3*time.Second, func() bool {
		g, err := run.Admin().Get(ctx, key)
		return err == nil && len(g.Kvs) == 0
	})
	if !gone {
		return 0, fmt.Errorf("P1's lock never expired")
	}
	run.Note("the lock key is gone: P1's lease expired while it was paused")

	if err := run.Phase(ctx, "P2 takes the free lock"); err != nil {
		return 0, err
	}
	l2, ok, err := lockTTL(ctx, p2, key, run.TTL()+10)
	if err != nil || !ok {
		return 0, fmt.Errorf("P2 could not lock: %v", err)
	}
	p2.setRole(RoleOwner, l2.rev)
	p2.Emit(Event{Kind: Acquired, Token: l2.rev, Text: fmt.Sprintf("locked %s (revision %d)", key, l2.rev)})

	if err := run.Phase(ctx, "P1 wakes up, believes it still holds the lock, and unlocks"); err != nil {
		return 0, err
	}
	p1.resume(ByScript)
	deleted, err := l1.unlock(ctx, p1, versioned)
	if err != nil {
		return 0, fmt.Errorf("P1 unlock: %w", err)
	}
	p1.setRole(RoleFollower, 0)
	if deleted {
		p1.Emit(Event{Kind: Released, Token: l1.rev, Text: "unlock deleted the key: that was P2's lock"})
	} else {
		p1.Emit(Event{Kind: Released, Token: l1.rev, Text: fmt.Sprintf("unlock refused: the key's ModRevision is %d, not %d, so it is not P1's", l2.rev, l1.rev)})
	}

	if err := run.Phase(ctx, "P3 tries the lock"); err != nil {
		return 0, err
	}
	l3, ok, err := lockTTL(ctx, p3, key, run.TTL()+10)
	if err != nil {
		return 0, fmt.Errorf("P3 lock: %w", err)
	}
	owners := 1
	if ok {
		owners = 2
		p3.setRole(RoleOwner, l3.rev)
		p3.Emit(Event{Kind: Acquired, Token: l3.rev, Text: fmt.Sprintf("locked %s (revision %d) while P2 still believes it holds it", key, l3.rev)})
	} else {
		p3.Emit(Event{Kind: Note, Text: "lock is held (by P2): P3 waits"})
	}
	// End the variant: everyone lets go, so the next one starts clean. In
	// step mode the learner first sees who etcd says holds the lock.
	if err := run.Phase(ctx, "this variant is over: everyone lets go and the lock key is deleted"); err != nil {
		return 0, err
	}
	for _, p := range []*Replica{p2, p3} {
		if p.State().Role == RoleOwner {
			p.setRole(RoleFollower, 0)
			p.Emit(Event{Kind: Released, Text: "variant over: lets go"})
		}
	}
	if _, err := run.Admin().Delete(ctx, key); err != nil {
		return 0, err
	}
	return owners, nil
}

func joinSentences(parts []string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		out += upperFirst(p) + ". "
	}
	return trimSpace(out)
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func trimSpace(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
