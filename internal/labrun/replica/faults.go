package replica

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Faults at the request: Dial puts a unary interceptor on the client it
// hands the learner's code (and, for the streams, a Watcher and a Lease:
// streams.go), which knows each request by its call site
// (the first frame of the stack in the lab's folder, and the RPC). The
// first time the replica reaches a site in a role it says so (a "reached"
// line: what exploration tries faults at). A fault armed with -faults
// fires at the Occurrence-th request from its site in its role: the
// replica asks the playground to claim it (a fault aimed at a role fires
// once in a run, at whichever replica gets there first), and the
// playground does what must happen outside the process (stop it, cut its
// network, move etcd's leader) before it answers.

// Armed is one request fault as a replica is told it (-faults, a JSON
// list): history.RequestFault's fields that a replica needs.
type Armed struct {
	ID         int    `json:"id"`
	Fault      string `json:"fault"`
	Role       string `json:"role,omitempty"`
	Site       string `json:"site"` // "labs/05_etcd_lock/etcdlock.go:42"
	RPC        string `json:"rpc"`
	Occurrence int    `json:"n"`
}

// Site is a call site as a replica reports it.
type Site struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Func string `json:"func"`
	// Entry is the outermost function in the lab's folder on the stack:
	// the lab's own API the playground called (Acquire, Write, Run).
	Entry string `json:"entry"`
	RPC   string `json:"rpc"`
}

// Hit is what a replica says when a request reaches an armed fault, or
// a site for the first time in a role.
type Hit struct {
	ID         int    `json:"id,omitempty"`
	Fault      string `json:"fault,omitempty"`
	Role       string `json:"role"`
	Site       Site   `json:"site"`
	Occurrence int    `json:"n"`
}

// Roles a replica can be in when it sends a request, by its own account
// (the events its lab's main sends).
const (
	RoleOwner  = "owner"
	RoleWaiter = "waiter"
	// RoleNewcomer is a replica that joined a run under way (the
	// playground starts one late in runs that explore), until it first
	// owns.
	RoleNewcomer = "newcomer"
)

// HoldFor is how long a held request waits before it is sent, as a
// multiple of the TTL plus a second: past the lease it was sent under.
func HoldFor(ttl int) time.Duration { return time.Duration(ttl)*time.Second + time.Second }

// labFrame matches a source file in a lab's folder (labs/NN_slug/x.go),
// not the graders' helpers (labs/internal/...).
var labFrame = regexp.MustCompile(`(^|/)(labs/[0-9][0-9]_[^/]+/[^/]+\.go)$`)

// callSite is the first frame of the calling goroutine's stack in a
// lab's folder, or ok false (a request of the playground's own code).
func callSite() (s Site, ok bool) {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if m := labFrame.FindStringSubmatch(f.File); m != nil {
			if !ok {
				s, ok = Site{File: m[2], Line: f.Line, Func: shortFunc(f.Function)}, true
			}
			s.Entry = shortFunc(f.Function)
		}
		if !more {
			return s, ok
		}
	}
}

// shortFunc is a function's name without its package path:
// "(*Lock).Release", "Acquire.func1".
func shortFunc(fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		fn = fn[i+1:]
	}
	if i := strings.Index(fn, "."); i >= 0 {
		fn = fn[i+1:]
	}
	return fn
}

// faulter is the replica's interceptor state.
type faulter struct {
	conn  *Conn
	ttl   int
	armed []Armed

	mu      sync.Mutex
	counts  map[string]int  // site key + role: requests (streams opened) so far
	answers map[string]int  // site key + role: stream answers so far
	seen    map[string]bool // site key + role: said "reached"
	fired   map[int]bool
	refused map[int]bool // claimed by another replica first

	refusal refusal // etcd refusing the replica's writes (refusal.go)
}

func newFaulter(conn *Conn, ttl int, armed []Armed) *faulter {
	return &faulter{conn: conn, ttl: ttl, armed: armed, counts: map[string]int{}, answers: map[string]int{},
		seen: map[string]bool{}, fired: map[int]bool{}, refused: map[int]bool{}}
}

// count counts one request from s in role, says so the first time, and
// returns the armed fault it reaches, if any.
func (f *faulter) count(s Site, role string) *Armed { return f.tally(f.counts, s, role, nil) }

// tally counts one request (or stream answer) from s in role in counts,
// says "reached" the first time the site is seen in the role, and
// returns the armed fault at this occurrence that fits allows (any when
// allows is nil), if one is left.
func (f *faulter) tally(counts map[string]int, s Site, role string, allows func(*Armed) bool) *Armed {
	key := fmt.Sprintf("%s:%d %s", s.File, s.Line, s.RPC)
	f.mu.Lock()
	counts[key+" "+role]++
	n := counts[key+" "+role]
	first := !f.seen[key+" "+role]
	f.seen[key+" "+role] = true
	var hit *Armed
	for i := range f.armed {
		a := &f.armed[i]
		if a.Site+" "+a.RPC == key && (a.Role == "" || a.Role == role) && a.Occurrence == n && !f.fired[a.ID] && !f.refused[a.ID] && (allows == nil || allows(a)) {
			hit = a
			break
		}
	}
	f.mu.Unlock()
	if first {
		f.conn.Emit(Event{Kind: "reached", Text: fmt.Sprintf("first %s from %s:%d (%s) as %s", s.RPC, s.File, s.Line, s.Func, role),
			Hit: &Hit{Role: role, Site: s, Occurrence: 1}})
	}
	return hit
}

// claim asks the playground for the fault (and, for a fault done from
// outside, has it done): false when another replica took it first.
func (f *faulter) claim(a *Armed, s Site, role string, n int) bool {
	ok := f.conn.ask(Event{Kind: "fault-hit", Text: fmt.Sprintf("%s at %s:%d %s", a.Fault, s.File, s.Line, s.RPC),
		Hit: &Hit{ID: a.ID, Fault: a.Fault, Role: role, Site: s, Occurrence: n}})
	f.mu.Lock()
	if ok {
		f.fired[a.ID] = true
	} else {
		f.refused[a.ID] = true
	}
	f.mu.Unlock()
	if ok && a.Fault == "refuse" {
		// Done here, in the process, at a request or a stream's answer
		// alike: its writes are refused from now on.
		f.startRefusal()
	}
	return ok
}

// unary is the interceptor.
func (f *faulter) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	s, ok := callSite()
	if !ok || ctx.Err() != nil {
		// The playground's own request, or one that will never be sent
		// (a probe with a context already ended).
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	s.RPC = path.Base(method)
	role := f.conn.Role()
	a := f.count(s, role)
	if f.refuses(s, req) {
		return refuse()
	}
	if a == nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	switch a.Fault {
	case "fail", "lose", "hold", "refuse", "revoke":
		if !f.claim(a, s, role, a.Occurrence) {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		return f.before(ctx, a.Fault, s, method, req, reply, cc, invoker, opts)
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil {
		// Done from outside (stop, cut, move etcd's leader) before the
		// answer reaches the lab's code.
		f.claim(a, s, role, a.Occurrence)
	}
	return err
}

// before does a fault that changes the request itself, once claimed.
func (f *faulter) before(ctx context.Context, fault string, s Site, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	switch fault {
	case "refuse":
		// The refusal began as the fault was claimed: this request is
		// its first, refused if it is a write.
		if f.refuses(s, req) {
			return refuse()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	case "revoke":
		// The playground ended the lease as the fault was claimed.
		return f.late(ctx, method, req, reply, cc, invoker, opts)
	case "fail":
		return status.Error(codes.Aborted, "playground fault: the request was dropped before it was sent")
	case "lose":
		if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
			return err
		}
		return status.Error(codes.DeadlineExceeded, "playground fault: etcd applied the request but its answer was lost")
	}
	// hold: the request goes out late, whether or not the caller still
	// waits for it (a packet held in the network arrives all the same).
	time.Sleep(HoldFor(f.ttl))
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := invoker(lctx, method, req, reply, cc, opts...)
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return err
}

// parseArmed reads -faults.
func parseArmed(s string) ([]Armed, error) {
	if s == "" {
		return nil, nil
	}
	var out []Armed
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("replica flags: -faults: %w", err)
	}
	return out, nil
}
