package labrun

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
	"github.com/ownership-election/playground/internal/proctree"
)

// The parent's side of request faults (history.RequestFault): armed in
// the replica processes when they start (-faults), claimed by the first
// replica whose request reaches one, and done here when they must be
// done from outside the process: a stop (SIGSTOP to its process group,
// not only a frozen network), a cut, a move of etcd's leader, the end of
// its lease at etcd.

// RequestArmed is the Kind of a ScheduledFault that arms a request fault
// (its Request says which); FaultSchedule reads one from each note that
// armed one.
const RequestArmed history.Kind = "request-armed"

// ExploreCallTimeout is a replica's bound on its own calls in a run with
// request faults: three TTLs and two seconds, longer than a stop after a
// request (pauseFor), so that the next request of the same call still
// goes out after the lease it was sent under ended. A bound shorter than
// the TTL hides the bugs that read twice: the call gives up before a
// window can open.
func ExploreCallTimeout(ttl int64) time.Duration {
	return time.Duration(3*ttl)*time.Second + 2*time.Second
}

// pauseFor and cutFor are how long a replica stays stopped, or cut off,
// after the request a fault hit: past its lease, and long enough for
// another replica to take over on a loaded machine (with 2 TTLs and a
// second, lab 06's check-then-put was shown in one exploration and not
// in the next: the next owner had not taken the lock yet when the
// stopped one woke).
func pauseFor(run *experiment.Run) time.Duration { return 3*run.TTLDuration() + time.Second }
func cutFor(run *experiment.Run) time.Duration   { return 2 * run.TTLDuration() }

// splitRequestFaults takes the request faults out of a schedule.
func splitRequestFaults(faults []history.ScheduledFault) (armed []history.RequestFault, rest []history.ScheduledFault) {
	for _, f := range faults {
		if f.Request != nil {
			armed = append(armed, *f.Request)
			continue
		}
		rest = append(rest, f)
	}
	return armed, rest
}

// armedFor is the -faults flag of the replica named name: the faults
// aimed at it or at a role, as JSON ("" for none).
func (lr *labRun) armedFor(name string) string {
	var out []replica.Armed
	for _, f := range lr.armed {
		if f.Replica != "" && f.Replica != name {
			continue
		}
		out = append(out, replica.Armed{ID: f.ID, Fault: string(f.Fault), Role: f.Role,
			Site: fmt.Sprintf("%s:%d", f.Site.File, f.Site.Line), RPC: f.Site.RPC, Occurrence: f.Occurrence})
	}
	if len(out) == 0 {
		return ""
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// armNotes records each armed fault in the history, where a faults
// file's reader finds them.
func (lr *labRun) armNotes(run *experiment.Run) {
	for i := range lr.armed {
		f := lr.armed[i]
		run.Emit(history.Event{Kind: history.Note, Text: "armed: " + f.String(), Facts: &history.Facts{Op: history.OpArmed, Succeeded: true, Request: &f}})
	}
}

// siteOf is a replica's site as the history keeps it.
func siteOf(s replica.Site) history.CallSite {
	return history.CallSite{File: s.File, Line: s.Line, Func: s.Func, Entry: s.Entry, RPC: s.RPC}
}

// reached records a replica's first request from a site in a role.
func (p *labProc) reached(h *replica.Hit) {
	rf := &history.RequestFault{Site: siteOf(h.Site), HitRole: h.Role, HitReplica: p.r.Name, Occurrence: 1}
	p.r.Emit(history.Event{Kind: history.Note, Text: fmt.Sprintf("first %s from %s, as %s", h.Site.RPC, rf.Site, h.Role),
		Facts: &history.Facts{Op: history.OpReached, Succeeded: true, Request: rf}})
}

// claim gives the fault h names to the replica that asks, if no other
// took it first, and does what must be done from outside its process.
func (lr *labRun) claim(ctx context.Context, p *labProc, h *replica.Hit) bool {
	lr.mu.Lock()
	var f *history.RequestFault
	for i := range lr.armed {
		if lr.armed[i].ID == h.ID {
			f = &lr.armed[i]
		}
	}
	if f == nil || lr.claimed[h.ID] {
		lr.mu.Unlock()
		return false
	}
	lr.claimed[h.ID] = true
	fired := *f
	lr.mu.Unlock()
	if h.Role != replica.RoleNewcomer {
		// The change the fault's window is for: the late replica joins
		// while the one hit is held up.
		lr.letNewcomerIn()
	}
	fired.HitRole, fired.HitReplica = h.Role, p.r.Name
	lr.fire(ctx, p, fired)
	return true
}

// fire does one claimed fault and records it.
func (lr *labRun) fire(ctx context.Context, p *labProc, f history.RequestFault) {
	r, run := p.r, lr.run
	facts := func() *history.Facts { return &history.Facts{Op: string(f.Fault), Succeeded: true, Request: &f} }
	switch f.Fault {
	case history.FailBefore:
		r.Emit(history.Event{Kind: history.RequestFailed, Origin: history.ByScript, Text: f.String(), Facts: facts()})
	case history.LoseAnswer:
		r.Emit(history.Event{Kind: history.AnswerLost, Origin: history.ByScript, Text: f.String(), Facts: facts()})
	case history.HoldRequest:
		f.For = replica.HoldFor(int(run.TTL()))
		r.Emit(history.Event{Kind: history.RequestHeld, Origin: history.ByScript, Text: f.String(), Facts: facts()})
	case history.PauseAfter:
		f.For = pauseFor(run)
		lr.stopFor(ctx, p, f, facts)
	case history.CutAfter:
		f.For = cutFor(run)
		r.Emit(history.Event{Kind: history.Note, Text: f.String(), Facts: facts()})
		r.Partition(history.ByScript)
		go func() {
			experiment.Sleep(ctx, f.For)
			r.Heal(history.ByScript)
		}()
	case history.LeaderAfter:
		r.Emit(history.Event{Kind: history.Note, Text: f.String(), Facts: facts()})
		if err := lr.moveLeaderOn(ctx, run); err != nil {
			run.Note("%s: %v", f.String(), err)
		}
	case history.SeverAfter, history.StopAfter:
		lr.fireStop(p, f, facts)
	case history.RefuseWrites:
		// Done in the replica's process (replica/refusal.go), which says
		// when it ends how many of its code's writes it refused.
		f.For = replica.RefuseFor(int(run.TTL()))
		r.Emit(history.Event{Kind: history.RequestsRefused, Origin: history.ByScript,
			Text: f.String() + ": every write answered at once with etcdserver: too many requests", Facts: facts()})
	case history.RevokeLease:
		if !f.Site.Stream() {
			f.For = replica.HoldFor(int(run.TTL()))
		}
		lr.revokeLease(ctx, p, f)
	}
}

// revokeLease ends at etcd, from the playground's own client, the lease
// the replica's client was last granted, while its process runs on, and
// records etcd's answer.
func (lr *labRun) revokeLease(ctx context.Context, p *labProc, f history.RequestFault) {
	facts := &history.Facts{Op: string(f.Fault), Request: &f}
	if len(p.leases) == 0 {
		facts.Err = "its client holds no lease"
		p.r.Emit(history.Event{Kind: history.LeaseRevoked, Origin: history.ByScript, Text: f.String() + ": its client holds no lease, there is none to end", Facts: facts})
		return
	}
	id := p.leases[len(p.leases)-1]
	facts.Lease = id
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	resp, err := lr.run.Admin().Revoke(rctx, clientv3.LeaseID(id))
	cancel()
	text := fmt.Sprintf("%s: etcd ended its lease %x", f.String(), id)
	if err != nil {
		facts.Err = err.Error()
		text = fmt.Sprintf("%s: etcd did not end its lease %x: %v", f.String(), id, err)
	} else {
		facts.Succeeded, facts.Revision = true, resp.Header.GetRevision()
		text += fmt.Sprintf(" at revision %d; its process was not stopped", facts.Revision)
	}
	p.r.Emit(history.Event{Kind: history.LeaseRevoked, Origin: history.ByScript, Text: text, Facts: facts})
}

// stopFor stops the replica's process (and whatever it started) for
// f.For, with SIGSTOP: every goroutine of it stands still, its
// keep-alives too, as in a long GC pause or a suspended VM.
func (lr *labRun) stopFor(ctx context.Context, p *labProc, f history.RequestFault, facts func() *history.Facts) {
	p.r.Emit(history.Event{Kind: history.Paused, Origin: history.ByScript, Text: f.String() + ": its process is stopped (SIGSTOP)", Facts: facts()})
	if p.cmd != nil {
		proctree.SignalGroup(p.cmd, syscall.SIGSTOP)
	}
	experiment.Sleep(ctx, f.For)
	if p.cmd != nil {
		proctree.SignalGroup(p.cmd, syscall.SIGCONT)
	}
	p.r.Emit(history.Event{Kind: history.Resumed, Origin: history.ByScript, Text: "its process runs again (SIGCONT), unaware of the time it lost", Facts: facts()})
}

// moveLeaderOn moves etcd's raft leader to the next member.
func (lr *labRun) moveLeaderOn(ctx context.Context, run *experiment.Run) error {
	cl := run.Cluster()
	if cl == nil {
		return fmt.Errorf("the run has no in-process cluster")
	}
	lead, err := cl.Leader()
	if err != nil {
		return err
	}
	return run.MoveLeader(ctx, lead, (lead+1)%len(cl.Members()))
}

// answer writes the playground's answer to a replica's question.
func (p *labProc) answer(ok bool) {
	b, _ := json.Marshal(replica.Answer{OK: ok})
	p.in.Write(append(b, '\n'))
}

// armedWait is how long a run with request faults waits for them all to
// fire once a replica leads: a request not sent by then is not reached.
const armedWait = 8 * time.Second

// awaitArmed is the schedule of a run whose faults are at requests: it
// waits for each to fire (armedWait at most), then out the longest
// stop, cut or hold one of them began, before the run's watch.
func (lr *labRun) awaitArmed(ctx context.Context, run *experiment.Run) error {
	run.Phase(ctx, fmt.Sprintf("faults at requests: %d armed, each fires at the request it names", len(lr.armed)))
	experiment.WaitFor(ctx, armedWait+run.TTLDuration(), func() bool {
		lr.mu.Lock()
		defer lr.mu.Unlock()
		return len(lr.claimed) >= len(lr.armed)
	})
	longest := time.Duration(0)
	lr.mu.Lock()
	for _, f := range lr.armed {
		if !lr.claimed[f.ID] {
			continue
		}
		switch f.Fault {
		case history.PauseAfter:
			longest = max(longest, pauseFor(run))
		case history.CutAfter, history.SeverAfter:
			longest = max(longest, cutFor(run))
		case history.HoldRequest, history.RevokeLease:
			longest = max(longest, replica.HoldFor(int(run.TTL())))
		case history.RefuseWrites:
			longest = max(longest, replica.RefuseFor(int(run.TTL())))
		}
	}
	lr.mu.Unlock()
	if err := experiment.Sleep(ctx, longest); err != nil {
		return err
	}
	return lr.awaitToldToStop(ctx)
}

// Fired lists the request faults of a run's history that fired, each
// once, in the order they did.
func Fired(h *history.History) []history.RequestFault {
	var out []history.RequestFault
	seen := map[int]bool{}
	for _, e := range h.Events {
		if e.Kind.IsFault() || (e.Kind == history.Note && e.Facts != nil && e.Facts.Op != history.OpArmed && e.Facts.Op != history.OpReached) {
			if e.Facts != nil && e.Facts.Request != nil && !seen[e.Facts.Request.ID] {
				seen[e.Facts.Request.ID] = true
				out = append(out, *e.Facts.Request)
			}
		}
	}
	return out
}
