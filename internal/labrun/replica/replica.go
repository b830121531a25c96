// Package replica is the child's side of a lab run: what a process that
// runs one copy of the learner's lab code uses to read its settings, reach
// etcd through its own fault proxy and tell the playground what it does.
//
// The protocol is one JSON event a line on the process's standard output,
// in the experiment History's event format (kind, token, text, facts). A
// line of kind "write" is a request to the fenced resource, which lives in
// the playground: the answer comes back as one JSON line on standard input
// ({"ok":true,"highest":41}); so does a line of kind "checkpoint", once
// the replica is not paused. Everything else the learner's code prints goes
// to standard error, which the playground keeps (bounded) for the report.
package replica

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/ownership-election/playground/embedetcd/access"
)

// Config is what the playground tells a replica process on its command line.
type Config struct {
	Name      string   // the replica's name, r1..r7
	Endpoints []string // its own fault proxies in front of etcd
	Namespace string   // every key, watch and lease goes under it
	Prefix    string   // the lab's key prefix inside the namespace
	TTL       int      // lease TTL in seconds
	// Faults are the request faults armed in this replica (-faults), and
	// Sites says to report each call site the first time it is reached
	// in a role (-sites; armed faults imply it).
	Faults []Armed
	Sites  bool
	// Newcomer: the replica joins a run already under way (-newcomer);
	// until it owns, its requests are in RoleNewcomer.
	Newcomer bool
	// StuckAfter is how long after it is told to stop the process says
	// where the lab's code stands, should it not have returned
	// (-stuck-after; 0: never). stuck.go.
	StuckAfter time.Duration
}

// ParseConfig reads the flags the playground passes.
func ParseConfig(args []string) (Config, error) {
	var c Config
	var eps string
	fs := flag.NewFlagSet("replica", flag.ContinueOnError)
	fs.StringVar(&c.Name, "name", "", "replica name")
	fs.StringVar(&eps, "endpoints", "", "etcd endpoints, comma separated")
	fs.StringVar(&c.Namespace, "namespace", "", "key namespace")
	fs.StringVar(&c.Prefix, "prefix", "", "the lab's key prefix")
	fs.IntVar(&c.TTL, "ttl", 2, "lease TTL in seconds")
	faults := fs.String("faults", "", "request faults to arm, a JSON list")
	fs.BoolVar(&c.Sites, "sites", false, "report each call site the first time it is reached")
	fs.BoolVar(&c.Newcomer, "newcomer", false, "the replica joins a run already under way")
	fs.DurationVar(&c.StuckAfter, "stuck-after", 0, "once told to stop, say after this long where the lab's code stands")
	callTimeout := fs.Duration("call-timeout", CallTimeout, "how long the replica's own calls wait")
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("replica flags: %w", err)
	}
	armed, err := parseArmed(*faults)
	if err != nil {
		return c, err
	}
	c.Faults, c.Sites = armed, c.Sites || len(armed) > 0
	// The process's one setting of its calls' bound, from its command
	// line: exploration asks for one no shorter than the TTL.
	CallTimeout = *callTimeout
	if c.Name == "" || eps == "" {
		return c, errors.New("replica flags: -name and -endpoints are required")
	}
	c.Endpoints = strings.Split(eps, ",")
	return c, nil
}

// Dial connects to etcd through the replica's endpoints, quietly, with
// every key under the namespace. On a shared cluster the playground hands
// the learner's TLS files and user down in the PLAYGROUND_ETCD_*
// variables (access.Settings.Env); the endpoints are always the replica's
// own fault proxies. Every lease the client is granted is reported (the
// playground checks, once the process has exited, that none outlived it),
// and so is what the client was told of keeping each alive (keepAlives).
func Dial(c Config) (*clientv3.Client, error) {
	s, err := access.FromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", c.Name, err)
	}
	cfg, err := s.ClientConfigVia(c.Endpoints, zap.NewNop())
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", c.Name, err)
	}
	cfg.DialTimeout = DialTimeout
	var ka *keepAlives
	var f *faulter
	if opened != nil {
		opened.setNewcomer(c.Newcomer)
		ka = &keepAlives{conn: opened, started: map[clientv3.LeaseID]bool{}, ended: map[clientv3.LeaseID]bool{}}
		cfg.DialOptions = append(cfg.DialOptions, grpc.WithChainStreamInterceptor(ka.interceptor))
		if opened.flight != nil {
			// Outermost, so a held request counts as waiting too.
			cfg.DialOptions = append(cfg.DialOptions, grpc.WithChainUnaryInterceptor(opened.flight.unary))
		}
		if c.Sites {
			f = newFaulter(opened, c.TTL, c.Faults)
			cfg.DialOptions = append(cfg.DialOptions, grpc.WithChainUnaryInterceptor(f.unary))
		}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("replica %s: connect: %w", c.Name, s.Explain(err))
	}
	cli.KV = namespace.NewKV(cli.KV, c.Namespace)
	cli.Watcher = namespace.NewWatcher(cli.Watcher, c.Namespace)
	cli.Lease = namespace.NewLease(cli.Lease, c.Namespace)
	if ka != nil {
		cli.Lease = reportingLease{Lease: cli.Lease, conn: opened, ka: ka}
	}
	if f != nil {
		// The streams' faults (streams.go), outermost: the lab's call
		// is on the stack when they count it.
		cli.Watcher = faultWatcher{Watcher: cli.Watcher, f: f}
		cli.Lease = faultLease{Lease: cli.Lease, f: f}
	}
	return cli, nil
}

// reportingLease tells the playground about every lease granted and
// every lease its client begins to keep alive.
type reportingLease struct {
	clientv3.Lease
	conn *Conn
	ka   *keepAlives
}

func (l reportingLease) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	ch, err := l.Lease.KeepAlive(ctx, id)
	if err == nil {
		l.ka.start(id)
	}
	return ch, err
}

func (l reportingLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	resp, err := l.Lease.Grant(ctx, ttl)
	if err == nil {
		l.conn.Emit(Event{Kind: "lease-granted", TTL: resp.TTL,
			Text:  fmt.Sprintf("etcd granted lease %x for %d s", int64(resp.ID), resp.TTL),
			Facts: &Facts{Op: "grant", Revision: resp.ResponseHeader.GetRevision(), Succeeded: true, Lease: int64(resp.ID), GrantedTTL: resp.TTL}})
	}
	return resp, err
}

// Facts are the part of the History's facts a replica reports.
type Facts struct {
	Op        string `json:"op"`
	Key       string `json:"key,omitempty"`
	Revision  int64  `json:"rev,omitempty"`
	Succeeded bool   `json:"ok"`
	Deleted   int64  `json:"deleted,omitempty"`
	Err       string `json:"err,omitempty"`
	Token     int64  `json:"token,omitempty"` // the fencing token a call carried
	// Lease and GrantedTTL: the lease a grant gave.
	Lease      int64 `json:"lease,omitempty"`
	GrantedTTL int64 `json:"granted_ttl,omitempty"`
	// Changed: the revisions at which the lab code's requests behind the
	// event changed etcd, by etcd's answers (history.Facts.Changed).
	Changed []int64 `json:"changed,omitempty"`
	// Tries: how many requests (history.Facts.Tries; a refusal's count).
	Tries int `json:"tries,omitempty"`
}

// Event is one line of the protocol, in the History's event format.
type Event struct {
	Kind  string  `json:"kind"`
	Token int64   `json:"token,omitempty"`
	TTL   int64   `json:"ttl,omitempty"`
	Value float64 `json:"value,omitempty"` // a number the event is about (an offset)
	Text  string  `json:"text"`
	Facts *Facts  `json:"facts,omitempty"`
	Hit   *Hit    `json:"hit,omitempty"` // a call site reached, or an armed fault hit
}

// Answer is the playground's answer to a write.
type Answer struct {
	OK      bool  `json:"ok"`
	Highest int64 `json:"highest"`
}

// Conn is the replica's line to the playground. Its methods are safe for
// concurrent use.
type Conn struct {
	mu    sync.Mutex
	out   *bufio.Writer
	in    *bufio.Scanner
	owner bool // by the replica's own events: it holds or leads
	// newcomer: it joined a run under way and has not owned yet.
	newcomer bool
	// flight are the lab code's requests not answered yet (stuck.go).
	flight *inflight

	clockMu sync.Mutex
	clocked map[string]bool // Clocked's lab functions
}

// Clocked names the lab's functions (as a call site's Entry:
// "CommitOffset") that the replica program itself calls on a clock of
// its own: their requests follow the program's pace, not the lab code's,
// so a refusal's count (refusal.go) leaves them out.
func (c *Conn) Clocked(entries ...string) {
	c.clockMu.Lock()
	defer c.clockMu.Unlock()
	if c.clocked == nil {
		c.clocked = map[string]bool{}
	}
	for _, e := range entries {
		c.clocked[e] = true
	}
}

func (c *Conn) isClocked(entry string) bool {
	c.clockMu.Lock()
	defer c.clockMu.Unlock()
	return c.clocked[entry]
}

// Role is the replica's role by its own events so far: RoleOwner from
// an "acquired" or "owns" until a "stepped-down", "lost" or "released";
// before that RoleNewcomer in a replica that joined late and has never
// owned, else RoleWaiter.
func (c *Conn) Role() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.owner:
		return RoleOwner
	case c.newcomer:
		return RoleNewcomer
	}
	return RoleWaiter
}

func (c *Conn) setNewcomer(b bool) {
	c.mu.Lock()
	c.newcomer = b
	c.mu.Unlock()
}

// ask sends e and waits for the playground's answer: whether it said ok.
func (c *Conn) ask(e Event) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.send(e)
	if !c.in.Scan() {
		return false
	}
	var a Answer
	return json.Unmarshal(c.in.Bytes(), &a) == nil && a.OK
}

// Open takes over standard output for the protocol and points os.Stdout
// at standard error, so that whatever the lab's code prints cannot be
// taken for an event.
func Open() *Conn {
	out := os.Stdout
	os.Stdout = os.Stderr
	opened = &Conn{out: bufio.NewWriter(out), in: bufio.NewScanner(os.Stdin), flight: newInflight()}
	return opened
}

// opened is the process's one Conn (it owns the standard output), which
// Dial's clients report their leases on.
var opened *Conn

// Emit sends one event.
func (c *Conn) Emit(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.send(e)
}

func (c *Conn) send(e Event) {
	switch e.Kind {
	case "acquired", "owns":
		c.owner, c.newcomer = true, false
	case "stepped-down", "lost", "released":
		c.owner = false
	}
	b, _ := json.Marshal(e)
	c.out.Write(b)
	c.out.WriteByte('\n')
	c.out.Flush()
}

// ErrNoAnswer: the playground did not answer a write (it is gone).
var ErrNoAnswer = errors.New("replica: no answer from the playground")

// Write asks the fenced resource to store value with token and returns
// its answer. It blocks for as long as the playground holds the replica
// paused.
func (c *Conn) Write(token int64, value string) (Answer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.send(Event{Kind: "write", Token: token, Text: value})
	if !c.in.Scan() {
		return Answer{}, ErrNoAnswer
	}
	var a Answer
	if err := json.Unmarshal(c.in.Bytes(), &a); err != nil {
		return Answer{}, fmt.Errorf("replica: bad answer: %w", err)
	}
	return a, nil
}

// Checkpoint waits for as long as the playground holds the replica
// paused. A lab whose resource is etcd (not the playground's) calls it
// before each write: that is where a pause stops its work.
func (c *Conn) Checkpoint() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.send(Event{Kind: "checkpoint"})
	if !c.in.Scan() {
		return ErrNoAnswer
	}
	return nil
}

// Failed reports a failure of the lab's code (Run returned early, an
// error) and is the last thing a process says before it exits 1.
func (c *Conn) Failed(format string, args ...any) {
	c.Emit(Event{Kind: "replica-failed", Text: fmt.Sprintf(format, args...)})
}
