package scenario

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
)

// flappingLinkScenario is the scenario flapping-link, the replay of
// Cloudflare's 2 November 2020 incident (lesson 13): a link between a
// follower and the raft leader that fails and recovers, over and over.
var flappingLinkScenario = &experiment.Scenario{
	Name:    "flapping-link",
	Title:   "Cloudflare, November 2020: a flapping link between two etcd members",
	Summary: "A 3-member cluster of its own; the link between one follower and the raft leader goes down for a few election timeouts and up again, three times, while the third member hears both. Every member's status (its raft term and the leader it follows) is read throughout. Once with raft's Pre-Vote off, once on.",
	Faults:  "cut and mend the raft link between a follower and the leader",
	// No replicas: the members are the story.
	OwnClusters:     true,
	NoReplicas:      true,
	DefaultReplicas: 1, MinReplicas: 1, MaxReplicas: 1,
	DefaultTTL: 1,
	Run:        runFlappingLink,
	Predict:    flappingQuestion,
	Shows: []history.Property{
		{Name: "leader-churned", Part: preVotePart(false), Check: leaderChurned},
		{Name: "leader-held", Part: preVotePart(true), Check: leaderHeld},
	},
}

// flapTicks are short raft timeouts, so that three flaps take seconds;
// the election timeout is still many heartbeats, so a loaded machine
// does not hold elections of its own.
var flapTicks = embedetcd.Ticks{TickMs: 30, ElectionMs: 300}

// flaps is how often the link goes down; each time for flapDown
// election timeouts, then up until every member follows one leader again.
const (
	flaps    = 3
	flapDown = 3
)

func preVotePart(on bool) string { return "pre-vote " + onOff(on) }

func runFlappingLink(ctx context.Context, run *experiment.Run) (history.Verdict, error) {
	for _, on := range []bool{false, true} {
		if err := flapVariant(ctx, run, on); err != nil {
			return history.Verdict{}, err
		}
	}
	return history.Verdict{}, nil
}

func flapVariant(ctx context.Context, run *experiment.Run, preVote bool) error {
	run.Part(preVotePart(preVote))
	et := time.Duration(flapTicks.ElectionMs) * time.Millisecond
	if err := run.Phase(ctx, fmt.Sprintf("%s: start 3 etcd members (heartbeat %d ms, election timeout %d ms) and read each one's status", preVotePart(preVote), flapTicks.TickMs, flapTicks.ElectionMs)); err != nil {
		return err
	}
	cl, err := embedetcd.StartCluster(ctx, 3, embedetcd.WithPreVote(preVote), embedetcd.WithTicks(flapTicks))
	if err != nil {
		return fmt.Errorf("start the cluster: %w", err)
	}
	defer cl.Close()
	obs, err := watchMembers(ctx, run, cl)
	if err != nil {
		return err
	}
	defer obs.stop()
	lead, err := obs.settle(ctx, 20*et)
	if err != nil {
		return err
	}
	f := (lead + 1) % 3
	ms := cl.Members()
	if err := run.Phase(ctx, fmt.Sprintf("flap the link between %s and %s (the leader) %d times: down %d election timeouts, then up until all follow one leader", ms[f].Name, ms[lead].Name, flaps, flapDown)); err != nil {
		return err
	}
	for i := range flaps {
		if err := flapOnce(ctx, run, cl, obs, f, lead, i+1, et); err != nil {
			return err
		}
	}
	run.Announce(preVotePart(preVote) + " is over: the members stop")
	return nil
}

// flapOnce takes the link down for flapDown election timeouts and up
// until the members agree on a leader (at least two election timeouts).
func flapOnce(ctx context.Context, run *experiment.Run, cl *embedetcd.Cluster, obs *memberWatch, f, lead, n int, et time.Duration) error {
	ms := cl.Members()
	link := ms[f].Name + "-" + ms[lead].Name
	if err := cl.CutLink(f, lead); err != nil {
		return err
	}
	run.Emit(history.Event{Kind: history.Partitioned, Replica: ms[f].Name, Origin: history.ByScript, Text: fmt.Sprintf("flap %d: link %s down, raft messages between them dropped", n, link)})
	if err := experiment.Sleep(ctx, flapDown*et); err != nil {
		return err
	}
	if err := cl.MendLink(f, lead); err != nil {
		return err
	}
	run.Emit(history.Event{Kind: history.Healed, Replica: ms[f].Name, Origin: history.ByScript, Text: fmt.Sprintf("flap %d: link %s up again", n, link)})
	if err := experiment.Sleep(ctx, 2*et); err != nil {
		return err
	}
	_, err := obs.settle(ctx, 20*et)
	return err
}

// memberWatch reads every member's status every 20 ms, through a client
// of its own, and records each change of term or leader a member reports
// as a LeaderObserved event.
type memberWatch struct {
	run    *experiment.Run
	names  map[uint64]string // member id -> name
	order  []string          // the names in the cluster's order
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	last map[string]memberStatus
}

type memberStatus struct {
	term   uint64
	leader string
}

func watchMembers(ctx context.Context, run *experiment.Run, cl *embedetcd.Cluster) (*memberWatch, error) {
	wctx, cancel := context.WithCancel(ctx)
	w := &memberWatch{run: run, names: map[uint64]string{}, cancel: cancel, last: map[string]memberStatus{}}
	var clients []pb.MaintenanceClient
	for _, m := range cl.Members() {
		cli, err := cl.ClientFor(m.Endpoint())
		if err != nil {
			cancel()
			return nil, fmt.Errorf("connect to %s: %w", m.Name, err)
		}
		mc := pb.NewMaintenanceClient(cli.ActiveConnection())
		resp, err := memberStatusOf(wctx, mc)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("status of %s: %w", m.Name, err)
		}
		w.names[resp.Header.MemberId] = m.Name
		w.order = append(w.order, m.Name)
		clients = append(clients, mc)
	}
	for i, m := range cl.Members() {
		w.wg.Add(1)
		go func() { defer w.wg.Done(); w.poll(wctx, m.Name, clients[i]) }()
	}
	return w, nil
}

func memberStatusOf(ctx context.Context, mc pb.MaintenanceClient) (*pb.StatusResponse, error) {
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return mc.Status(sctx, &pb.StatusRequest{})
}

func (w *memberWatch) poll(ctx context.Context, name string, mc pb.MaintenanceClient) {
	for ctx.Err() == nil {
		if resp, err := memberStatusOf(ctx, mc); err == nil {
			w.report(name, memberStatus{term: resp.RaftTerm, leader: w.names[resp.Leader]}, resp.Header.Revision)
		}
		if experiment.Sleep(ctx, 20*time.Millisecond) != nil {
			return
		}
	}
}

// report records what a member said, when it differs from its last answer.
func (w *memberWatch) report(name string, s memberStatus, rev int64) {
	w.mu.Lock()
	same := w.last[name] == s
	w.last[name] = s
	w.mu.Unlock()
	if same {
		return
	}
	text := fmt.Sprintf("%s reports term %d, leader %s", name, s.term, s.leader)
	if s.leader == "" {
		text = fmt.Sprintf("%s reports term %d and no leader", name, s.term)
	}
	w.run.Emit(history.Event{Kind: history.LeaderObserved, Replica: name, Text: text,
		Facts: &history.Facts{Op: "status", Revision: rev, Succeeded: true, RaftTerm: s.term, Leader: s.leader}})
}

// settle waits until every member reports the same leader in the same
// term, and returns that leader's index.
func (w *memberWatch) settle(ctx context.Context, d time.Duration) (int, error) {
	lead := -1
	ok := experiment.WaitFor(ctx, d, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		var one memberStatus
		for _, s := range w.last {
			if s.leader == "" || (one != memberStatus{} && s != one) {
				return false
			}
			one = s
		}
		if len(w.last) < len(w.order) {
			return false
		}
		lead = slices.Index(w.order, one.leader)
		return lead >= 0
	})
	if !ok {
		return -1, fmt.Errorf("the members did not agree on a leader within %s", d)
	}
	return lead, nil
}

func (w *memberWatch) stop() {
	w.cancel()
	w.wg.Wait()
}

// raftView is what the members reported in one part: the terms in which
// some member named a leader, in order, with that leader; and in how many
// of the cuts of the flapping link some member reported no leader.
type raftView struct {
	terms   []uint64
	leaders map[uint64]string
	flapper string // the member whose link to the first leader was cut ("" if none was)
	cuts    int    // how often the link went down
	lost    int    // in how many of those cuts a member reported no leader
}

func viewOf(f *history.Findings) raftView {
	v := raftView{leaders: map[uint64]string{}}
	cut, lostThisCut := false, false
	for _, e := range f.Events {
		switch {
		case e.Kind == history.Partitioned:
			v.flapper, cut, lostThisCut = e.Replica, true, false
			v.cuts++
		case e.Kind == history.Healed:
			cut = false
		case e.Kind != history.LeaderObserved || e.Facts == nil || e.Facts.Op != "status":
		case e.Facts.Leader == "":
			if cut && !lostThisCut {
				v.lost, lostThisCut = v.lost+1, true
			}
		default:
			if _, seen := v.leaders[e.Facts.RaftTerm]; !seen {
				v.terms = append(v.terms, e.Facts.RaftTerm)
				v.leaders[e.Facts.RaftTerm] = e.Facts.Leader
			}
		}
	}
	return v
}

// changes is how many new terms with a leader followed the first: each
// one an election won, whoever won it.
func (v raftView) changes() int { return max(len(v.terms)-1, 0) }

// story says what the flapping member and the cluster reported.
func (v raftView) story() string {
	if v.flapper == "" {
		return "no link was cut"
	}
	var out []string
	for _, t := range v.terms {
		out = append(out, fmt.Sprintf("term %d (%s)", t, v.leaders[t]))
	}
	first := ""
	if len(v.terms) > 0 {
		first = " and " + v.leaders[v.terms[0]]
	}
	return fmt.Sprintf("the link between %s%s went down %d times, and in %d of those cuts a member reported no leader; the members reported a leader in %s, %s", v.flapper, first, v.cuts, v.lost, joinAnd(out), newTerms(v.changes()))
}

func newTerms(n int) string {
	switch n {
	case 0:
		return "and in no other term"
	case 1:
		return "one new leader term"
	}
	return fmt.Sprintf("%d new leader terms", n)
}

// leaderChurned: without Pre-Vote the cut-off member's elections depose
// the leader when the link comes back.
func leaderChurned(f *history.Findings) (bool, string) {
	v := viewOf(f)
	return v.lost > 0 && v.changes() > 0, "with Pre-Vote off " + v.story()
}

// leaderHeld: with Pre-Vote they never get that far.
func leaderHeld(f *history.Findings) (bool, string) {
	v := viewOf(f)
	return v.lost > 0 && v.changes() == 0, "with Pre-Vote on " + v.story()
}

var flappingQuestion = &experiment.Question{
	Prompt: "Each time the link comes back, does the cluster get a new leader? Pick what the members report in the two parts.",
	Options: []experiment.Option{
		{Text: "A new leader after each flap either way", Happened: churn(true, true)},
		{Text: "Pre-Vote off: new leaders, term after term; on: the same leader throughout", Happened: churn(true, false)},
		{Text: "The same leader throughout, either way", Happened: churn(false, false)},
	},
}

// churn: whether the leader changed without Pre-Vote (off) and with it (on).
func churn(off, on bool) func(h *history.History) bool {
	return func(h *history.History) bool {
		a, b := history.Find(h, preVotePart(false)), history.Find(h, preVotePart(true))
		return a != nil && b != nil && (viewOf(a).changes() > 0) == off && (viewOf(b).changes() > 0) == on
	}
}
