package replica

import (
	"context"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// What the lab's code was doing when, told to stop, it did not return:
// the playground kills such a process after its grace, and a learner
// told only "it hung" has to guess where. So every request the lab's
// code sends is tracked until etcd answers it, and once the process has
// been told to stop for -stuck-after (a second short of the grace) it
// says where its main goroutine stands in the lab's file, what it was
// calling there, and which requests still wait for an answer: a "stuck"
// line the playground keeps for its report should it have to kill the
// process.

// inflight are the lab code's requests sent and not answered yet.
type inflight struct {
	mu   sync.Mutex
	next int
	reqs map[int]pending
}

// pending is one request waiting for etcd's answer.
type pending struct {
	site  Site
	since time.Time
}

func newInflight() *inflight { return &inflight{reqs: map[int]pending{}} }

// unary tracks one request of the lab's code from sending to answer.
func (t *inflight) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	s, ok := callSite()
	if !ok {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	s.RPC = path.Base(method)
	t.mu.Lock()
	t.next++
	id := t.next
	t.reqs[id] = pending{site: s, since: time.Now()}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.reqs, id)
		t.mu.Unlock()
	}()
	return invoker(ctx, method, req, reply, cc, opts...)
}

// waiting says the requests still unanswered at now, the oldest first,
// three at most: "its Txn sent from election.go:131 ((*Candidate).term)
// 4.9 s before".
func (t *inflight) waiting(now time.Time) []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	ps := make([]pending, 0, len(t.reqs))
	for _, p := range t.reqs {
		ps = append(ps, p)
	}
	t.mu.Unlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].since.Before(ps[j].since) })
	var out []string
	for _, p := range ps[:min(len(ps), 3)] {
		out = append(out, fmt.Sprintf("its %s sent from %s:%d (%s) %.1f s before", p.site.RPC, path.Base(p.site.File), p.site.Line, p.site.Func, now.Sub(p.since).Seconds()))
	}
	return out
}

// reportStuck waits for the shutdown (ctx ends), then after, and says
// where the lab's code is if the process still runs by then.
func reportStuck(ctx context.Context, c *Conn, after time.Duration) {
	if after <= 0 {
		return
	}
	<-ctx.Done()
	time.Sleep(after)
	text := whereStuck(goroutines())
	if w := c.flight.waiting(time.Now()); len(w) > 0 {
		text += "; etcd had not answered " + strings.Join(w, ", ")
	}
	c.Emit(Event{Kind: "stuck", Text: text})
}

// goroutines is the stack of every goroutine of the process, as the
// runtime prints it.
func goroutines() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 8<<20 {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// frame is one function of a goroutine's stack: its name and its file
// and line.
type frame struct {
	fn, file string
	line     int
}

// mainStack is the main goroutine's state ("select", "chan receive")
// and frames, innermost first, from a dump of every goroutine.
func mainStack(dump string) (state string, frames []frame) {
	for _, g := range strings.Split(dump, "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "goroutine 1 [") {
			continue
		}
		state = strings.TrimSuffix(strings.TrimPrefix(lines[0], "goroutine 1 ["), "]:")
		state, _, _ = strings.Cut(state, ",")
		for i := 1; i+1 < len(lines); i += 2 {
			fn := lines[i]
			if strings.HasPrefix(fn, "created by ") || strings.HasPrefix(fn, "...") {
				break
			}
			if k := strings.LastIndex(fn, "("); k > 0 {
				fn = fn[:k]
			}
			loc := strings.TrimSpace(lines[i+1])
			loc, _, _ = strings.Cut(loc, " ")
			file, line := loc, 0
			if k := strings.LastIndex(loc, ":"); k > 0 {
				file = loc[:k]
				fmt.Sscanf(loc[k+1:], "%d", &line)
			}
			frames = append(frames, frame{fn: fn, file: file, line: line})
		}
	}
	return state, frames
}

// whereStuck says where the main goroutine of a dump stands in the
// lab's file: the lab's innermost line, its function, and the call it
// was in there (the harness's own wrappers left out), or the state it
// waits in when that is the lab's own line (a select of its own).
func whereStuck(dump string) string {
	state, frames := mainStack(dump)
	for i, f := range frames {
		m := labFrame.FindStringSubmatch(f.file)
		if m == nil {
			continue
		}
		at := fmt.Sprintf("it was at %s:%d in %s", path.Base(m[2]), f.line, shortFunc(f.fn))
		for j := i - 1; j >= 0; j-- {
			c := frames[j]
			if harnessFrame(c) {
				continue
			}
			if strings.HasPrefix(c.fn, "runtime.") {
				return at + ", waiting in a " + state + " of its own"
			}
			return at + ", in a call to " + packageFunc(c.fn) + " (waiting: " + state + ")"
		}
		return at + " (waiting: " + state + ")"
	}
	return "its Run had returned, but the process had not ended (waiting: " + state + ")"
}

// harnessFrame says whether a frame is the harness's own wrapping of
// the client (its fault and tracking wrappers, the key namespace), which
// the learner never called by name.
func harnessFrame(f frame) bool {
	return strings.Contains(f.fn, "/internal/labrun/replica.") || strings.Contains(f.fn, "/client/v3/namespace.") ||
		strings.HasPrefix(f.file, "<autogenerated>")
}

// packageFunc is a function's name with its package's last element:
// "concurrency.(*Election).Resign", "clientv3.(*lessor).Revoke".
func packageFunc(fn string) string {
	dir, name := "", fn
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		dir, name = fn[:i], fn[i+1:]
	}
	if len(name) > 1 && name[0] == 'v' && name[1] >= '0' && name[1] <= '9' {
		// A major version's folder (client/v3) is named after its parent.
		name = path.Base(dir) + name
	}
	return name
}
