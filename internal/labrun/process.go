package labrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd/access"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
	"github.com/ownership-election/playground/internal/proctree"
)

// The parent's side of a replica process: start it, read its events,
// answer its writes, and end it the way the fault or the shutdown says.

// shutdownGrace is how long a replica's code has to return once told to
// stop before it is killed and reported as hanging: twice the longest a
// correct solution takes on a network cut off (the references bound a
// resign by a second and the revoke that closes a session by the TTL, so
// TTL + 1 s), 5 s at least. A code that waits on etcd with no bound of
// its own, or ignores the shutdown, is still waiting then.
func shutdownGrace(ttl time.Duration) time.Duration {
	return max(5*time.Second, 2*(ttl+time.Second))
}

// grace is the run's shutdownGrace, and in a run that explores a second
// more than the replicas' own bound on their calls (ExploreCallTimeout,
// longer there): the lock labs' replica programs release and revoke
// with that bound on the way out, and a call that gives up in time is
// not a hang.
func (lr *labRun) grace() time.Duration {
	g := shutdownGrace(lr.run.TTLDuration())
	if lr.exploring() {
		g = max(g, ExploreCallTimeout(lr.run.TTL())+stuckLead)
	}
	return g
}

// stuckLead is how long before the grace ends a process still stopping
// says where its code stands (replica.Config.StuckAfter).
const stuckLead = time.Second

// labMaxLine bounds one line of a replica's protocol.
const labMaxLine = 64 << 10

// body runs one replica process until the replica is crashed (killed at
// once) or the run stops it (SIGTERM, then killed after the grace).
func (lr *labRun) body(ctx context.Context, r *experiment.Replica) error {
	cmd := lr.spec.Command(lr.replicaConfig(r))
	cmd.Env = labEnv(cmd.Env, lr.run.Access())
	// A process group of its own, so that a crash or a shutdown reaches
	// whatever the lab's code started too; and no orphan keeps
	// campaigning when the playground dies without stopping it (kill -9).
	proctree.Group(cmd)
	proctree.DieWithParent(cmd, syscall.SIGKILL)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("replica %s: %w", r.Name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("replica %s: %w", r.Name, err)
	}
	stderr := proctree.NewTail(16 << 10)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		r.Emit(history.Event{Kind: ReplicaFailed, Text: "its process could not start: " + err.Error()})
		return nil
	}
	p := &labProc{lr: lr, r: r, cmd: cmd, in: stdin, kill: make(chan struct{}), down: make(chan struct{})}
	lr.setProc(r.Name, p)
	exited := make(chan error, 1)
	go func() {
		p.pump(ctx, stdout)
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if ctx.Err() == nil {
			p.endedByItself(err, stderr.String())
		}
		return nil
	case <-ctx.Done():
	}
	if r.State().Crashed {
		proctree.KillGroup(cmd)
		<-exited
		return nil
	}
	told := lr.run.Elapsed()
	proctree.SignalGroup(cmd, syscall.SIGTERM)
	grace := lr.grace()
	select {
	case err := <-exited:
		p.stoppedBadly(err, stderr.String())
		p.leasesLeft()
	case <-p.kill:
		proctree.KillGroup(cmd)
		<-exited
	case <-time.After(grace):
		p.hung(told, grace)
		proctree.KillGroup(cmd)
		<-exited
	}
	return nil
}

// OpHung is the Facts.Op of a ReplicaFailed event whose replica, told to
// stop, had not returned within the grace.
const OpHung = "hung"

// hung reports a process that, told to stop at told, was still running
// grace later: where its code stood, by its own last report (stuck.go),
// and whether its network was cut off meanwhile.
func (p *labProc) hung(told, grace time.Duration) {
	text := fmt.Sprintf("told to stop at %s, it had not returned %.0f s later and was killed", at(told), grace.Seconds())
	if where := p.stuckReport(); where != "" {
		text += ": " + where
	}
	if p.r.State().Partitioned {
		text += "; its network was cut off"
	}
	p.r.Emit(history.Event{Kind: ReplicaFailed, Text: text, Facts: &history.Facts{Op: OpHung}})
}

// stuckReport is the last "stuck" line of the process ("" for none).
func (p *labProc) stuckReport() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stuck
}

func (lr *labRun) replicaConfig(r *experiment.Replica) ReplicaConfig {
	c := ReplicaConfig{Name: r.Name, Endpoints: r.Endpoints(), Namespace: lr.run.Namespace(), Prefix: lr.lab.prefix, TTL: lr.run.TTL(),
		Faults: lr.armedFor(r.Name), Sites: lr.spec.Sites, Newcomer: lr.isNewcomer(r.Name)}
	if len(lr.armed) > 0 || lr.spec.Sites {
		c.CallTimeout = ExploreCallTimeout(c.TTL)
	}
	c.StuckAfter = lr.grace() - stuckLead
	return c
}

// labProc is one replica process as the parent sees it.
type labProc struct {
	lr       *labRun
	r        *experiment.Replica
	cmd      *exec.Cmd // its process, which a request fault may stop
	in       io.WriteCloser
	reported bool          // the process said itself how it failed
	leases   []int64       // the leases its client was granted
	kill     chan struct{} // closed: kill it now, even while it stops
	killOnce sync.Once
	down     chan struct{} // closed when it first reports stepping down
	downOnce sync.Once
	mu       sync.Mutex
	stuck    string // where its code stood, once told to stop, by its own report
}

// killNow kills the process at once, even in the middle of stopping.
func (p *labProc) killNow() { p.killOnce.Do(func() { close(p.kill) }) }

// labEnv is a replica process's environment: the playground's own,
// without any etcd settings of the learner's shell, and with the run's
// (the learner's TLS files and user on a shared cluster; the child dials
// its own fault proxies in any case).
func labEnv(env []string, a access.Settings) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PLAYGROUND_ETCD_") && !strings.HasPrefix(kv, access.EnvClass+"=") {
			out = append(out, kv)
		}
	}
	return append(out, a.Env()...)
}

// leasesLeft asks etcd, once a process told to stop has exited, about
// every lease it was granted: one still alive outlived the code that
// held it (a session orphaned instead of closed), and keeps whatever is
// attached to it, or at least etcd's memory, for up to a TTL.
func (p *labProc) leasesLeft() {
	for _, id := range p.leases {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := p.lr.run.Admin().TimeToLive(ctx, clientv3.LeaseID(id))
		cancel()
		if err != nil || resp.TTL < 0 {
			continue
		}
		p.r.Emit(history.Event{Kind: history.Note, TTL: resp.GrantedTTL,
			Text:  fmt.Sprintf("its process has exited, but etcd still holds its lease %x (TimeToLive: %d s left of %d s)", id, resp.TTL, resp.GrantedTTL),
			Facts: &history.Facts{Op: "timetolive", Lease: id, GrantedTTL: resp.GrantedTTL, TTLLeft: resp.TTL, Succeeded: true, Revision: resp.ResponseHeader.GetRevision()}})
	}
}

// pump reads the process's events until its output ends.
func (p *labProc) pump(ctx context.Context, out io.Reader) {
	defer p.in.Close()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 4096), labMaxLine)
	for sc.Scan() {
		var e history.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Kind == "reached" || e.Kind == "fault-hit" {
			p.hit(ctx, e.Kind, sc.Bytes())
			continue
		}
		if e.Kind == "stuck" {
			// Kept for the report, should the process hang: not an event.
			p.mu.Lock()
			p.stuck = e.Text
			p.mu.Unlock()
			continue
		}
		p.handle(ctx, e)
	}
	if err := sc.Err(); err != nil {
		p.reported = true
		p.r.Emit(history.Event{Kind: ReplicaFailed, Text: fmt.Sprintf("its process wrote a protocol line longer than %d KiB: %v", labMaxLine>>10, err)})
		io.Copy(io.Discard, out)
	}
}

// hit reads a line about a call site: the first request from one, or
// one that reached an armed fault (which the process waits to hear
// whether it claimed).
func (p *labProc) hit(ctx context.Context, kind history.Kind, line []byte) {
	var l struct {
		Hit *replica.Hit `json:"hit"`
	}
	if json.Unmarshal(line, &l) != nil || l.Hit == nil {
		if kind == "fault-hit" {
			p.answer(false)
		}
		return
	}
	if kind == "reached" {
		p.reached(l.Hit)
		return
	}
	p.answer(p.lr.claim(ctx, p, l.Hit))
}

// handle records one event of the process (a write goes to the resource
// first, once the replica is not paused: that is where its work stands
// still; a checkpoint only waits for that).
func (p *labProc) handle(ctx context.Context, e history.Event) {
	r := p.r
	switch e.Kind {
	case "write":
		r.Checkpoint(ctx)
		res := p.lr.run.Resource()
		ok := res.Write(r, e.Token, e.Text)
		b, _ := json.Marshal(struct {
			OK      bool  `json:"ok"`
			Highest int64 `json:"highest"`
		}{ok, res.State().Highest})
		p.in.Write(append(b, '\n'))
		return
	case "checkpoint":
		// A lab whose resource is etcd itself asks before each write,
		// so that a pause stops its work there too.
		r.Checkpoint(ctx)
		p.in.Write([]byte(`{"ok":true}` + "\n"))
		return
	case history.Acquired:
		r.SetRole(experiment.RoleOwner, e.Token)
		e.TTL = p.lr.run.TTL()
	case history.SteppedDown, history.Lost, history.Released:
		r.SetRole(experiment.RoleFollower, 0)
		p.downOnce.Do(func() { close(p.down) })
	case history.LeaseGranted:
		// A grant its client reported (replica.Dial): kept as a note
		// with etcd's answer, and remembered for the check, once the
		// process has exited, that the lease went with it.
		if e.Facts != nil && e.Facts.Lease != 0 {
			p.leases = append(p.leases, e.Facts.Lease)
		}
		e.Kind = history.Note
	case "owns":
		// A lab whose replicas each own a part at once (shards) says so
		// without the sole ownership Acquired stands for: it only makes
		// the replica a schedule's target, until it steps down.
		r.SetRole(experiment.RoleOwner, e.Token)
		// In the history it is a claim of shards, not a note: the
		// timeline then shows the replica as a worker that owns shards
		// (its lowest token) from there, where a note left it a
		// follower.
		e.Kind = history.ShardClaimed
	case history.WriteAccepted, history.WriteRejected:
		// A lab whose resource is etcd: what the lab's write returned.
	case history.LeaseRenewed, history.LeaseExpired:
		// etcd's answers to the keep-alives its client sent: what the
		// lab's code was told of its lease (replica.keepAlives).
	case "running":
		p.lr.markRunning(r.Name)
		e.Kind = history.Note
	case "not-written", ReplicaFailed:
		if e.Kind == "not-written" {
			p.lr.markNotWritten(r.Name)
		}
		p.reported = true
		e.Kind = ReplicaFailed
	default:
		e.Kind = history.Note
	}
	r.Emit(history.Event{Kind: e.Kind, Token: e.Token, TTL: e.TTL, Value: e.Value, Text: e.Text, Facts: e.Facts})
}

// endedByItself reports a process that exited while it was meant to run:
// a panic, a fatal error, or Run returning early. The replica counts as
// crashed from then on (its process is gone); a restart starts it again.
func (p *labProc) endedByItself(err error, stderr string) {
	r := p.r
	if !p.reported {
		r.Emit(history.Event{Kind: ReplicaFailed, Text: "its process ended by itself: " + exitWhy(err, stderr)})
	}
	r.MarkCrashed()
	r.Emit(history.Event{Kind: history.Crashed, Text: "its process is gone; etcd keeps its lease until the TTL runs out"})
}

// stoppedBadly reports a process that, told to stop, exited with an error
// it did not explain itself.
func (p *labProc) stoppedBadly(err error, stderr string) {
	if err != nil && !p.reported {
		p.r.Emit(history.Event{Kind: ReplicaFailed, Text: "when told to stop, its process " + exitWhy(err, stderr)})
	}
}

// exitWhy says how a process ended, from its exit status and what it
// printed: the panic or fatal error line and the first frame in the lab.
func exitWhy(err error, stderr string) string {
	var why []string
	lines := strings.Split(stderr, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			why = append(why, strings.TrimSpace(l))
			for _, f := range lines[i:] {
				if strings.Contains(f, "/labs/") && strings.Contains(f, ".go:") {
					why = append(why, "at "+strings.TrimSpace(strings.Fields(f)[0]))
					break
				}
			}
			break
		}
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		why = append([]string{ee.ProcessState.String()}, why...)
	case err != nil:
		why = append([]string{err.Error()}, why...)
	default:
		why = append([]string{"exit status 0"}, why...)
	}
	return strings.Join(why, ": ")
}
