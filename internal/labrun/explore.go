package labrun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ownership-election/playground/internal/experiment"
	"github.com/ownership-election/playground/internal/history"
	"github.com/ownership-election/playground/internal/labrun/replica"
)

// Exploration: faults at every request the learner's code sends. A calm
// run records which call sites each role reaches; then one run for each
// reached site, fault kind and role (depth 1), then pairs of faults,
// within a budget, several runs at once, each against its own etcd. A
// run that breaks the lab's rules is run again with the reference under
// the same faults (matched by the reference's own call sites): only
// where the reference holds does it count against the learner's code;
// where both fail the fault is a limit of the protocol or the runner.

// DefaultBudget is exploration's default time for one lab: about two
// minutes on a 2-core laptop with a warm build cache.
const DefaultBudget = 2 * time.Minute

// ExploreOptions say what to explore and how.
type ExploreOptions struct {
	Root   string
	Lab    Lab
	Source string // the file to run as the learner's ("": labs/<ID>/<File> as it is)
	// Budget bounds the runs (DefaultBudget when 0); Seed fixes their
	// order; Parallel is how many go at once (from the cores when 0).
	Budget   time.Duration
	Seed     uint64
	Parallel int
	// All: go on after the first violation.
	All bool
	// Progress, if set, is told after each run.
	Progress func(ExploreProgress)
	// Env makes the environment of one run (its own etcd when nil).
	Env func() experiment.Env
}

// ExploreProgress is how far an exploration got.
type ExploreProgress struct {
	Done, Planned int
	// Covered are the call sites at least one fault was tried at, of
	// Sites reached.
	Covered, Sites int
	Last           string // what the last run was and how it ended
}

// Cell is one fault kind at one call site.
type Cell string

// The states of a cell of the coverage grid.
const (
	CellHeld       Cell = "held"
	CellViolated   Cell = "violated"
	CellLimit      Cell = "limit" // the reference failed the same way: not the learner's
	CellNotReached Cell = "not reached"
	CellNotTried   Cell = "not tried" // reached, but the budget ended first
	// CellUnconfirmed: a rule broke under the fault, but its smallest
	// run, run again, did not break it again nearly every time (confirm);
	// not counted.
	CellUnconfirmed Cell = "unconfirmed"
)

// SiteRow is one row of the grid: a call site as one role reached it
// in the calm run.
type SiteRow struct {
	Site  history.CallSite
	Role  string
	Cells map[history.FaultAt]Cell
}

// Violation is a fault set under which the learner's code broke a rule
// and the reference, under the same faults, held; one that counts broke
// it again in nearly every rerun of its smallest run (Confirmed).
type Violation struct {
	Faults   []history.RequestFault
	Findings []history.Finding // the learner's run's, those that did not hold
	History  history.History   // the smallest run that shows it
	// Reference is the reference's run under the same faults.
	Reference history.History
	// Confirmed: the smallest faults, run again, broke the rules again
	// the first three times, or five times in six, or, while reruns are
	// quick, nine in ten: Again of Tries reruns (Tries is 2 to 10: the
	// reruns stop once the count is known).
	Confirmed    bool
	Again, Tries int
	// Shrunk says what shrinking took away ("3 replicas to 2").
	Shrunk []string
	// longer is the run before shrinking stopped it early, kept for
	// record: when the early end does not break the rule again, the
	// longer run is confirmed instead.
	longer *longerRun
}

// ReferenceSays is what the reference did under v's faults, as the
// report says it: held where every fault hit it too and it broke no
// rule; else why the comparison is weaker (it sends no such request, the
// request the fault was matched to was not sent in its run, or it broke
// other rules).
func (v Violation) ReferenceSays() string {
	switch {
	case v.Reference.Verdict == nil:
		return "not run: it sends no request from the function yours sent this one from, so the faults could not be matched"
	case len(Fired(&v.Reference)) < len(v.Faults):
		return "kept that rule, but the fault did not hit it: the request it was matched to was not sent in its run"
	case !v.Reference.Verdict.Showed:
		return "broke only " + names(failed(*v.Reference.Verdict)) + ", not the rule yours broke"
	}
	return "held"
}

// Limit is a fault set under which the reference failed too: a limit of
// the protocol or of the runner, not the learner's bug.
type Limit struct {
	Faults    []history.RequestFault
	Learner   []history.Finding
	Reference []history.Finding
}

// ExploreReport is what an exploration found.
type ExploreReport struct {
	Lab  string
	Grid []SiteRow
	// Runs are the runs done; Planned every run planned (the two calm
	// runs, the plan's, and those a violation added: the reference's
	// beside it and the shrinking runs); Skipped the planned runs the
	// budget (or a first violation, without All) left out.
	Runs       int
	Planned    int
	Skipped    int
	Violations []Violation
	// Unconfirmed are failures whose smallest run, run again, broke the
	// rules again too seldom (confirm): not counted, not in Violations.
	Unconfirmed []Violation
	Limits      []Limit
	// Calm is set when the learner's code broke the rules without any
	// fault: the calm run's findings. CalmRun is that run.
	Calm    []history.Finding
	CalmRun history.History
	Took    time.Duration
}

// plannedRun is one run of the plan: its faults (one at depth 1).
type plannedRun struct {
	faults []history.RequestFault
}

// explorer is one exploration's state.
type explorer struct {
	o        ExploreOptions
	bin, ref string
	start    time.Time
	refSites []history.RequestFault // the reference's reached sites
	// firstWaiter is the first request site a waiter reached in the
	// learner's calm run.
	firstWaiter history.CallSite

	// run is runLab, or a test's stand-in.
	run func(ctx context.Context, reference bool, faults []history.RequestFault, p history.Params, sites bool) (history.History, error)

	// quiet is held shared by every run but a confirmation's, which
	// holds it alone: a confirmation waits for the runs going to end and
	// runs on a machine as quiet as a learner's replay (a failure that
	// came back only beside other runs, two at once, replayed once in
	// ten on its own).
	quiet sync.RWMutex
	// confirmQuick is how long a confirmation's reruns count as quick
	// (confirm).
	confirmQuick time.Duration

	mu     sync.Mutex
	report *ExploreReport
	found  bool // a confirmed violation: stop unless All
	done   int
	// endRest cancels the runs still going once a violation is
	// confirmed, unless All: their judging and shrinking would only
	// lengthen the exploration.
	endRest context.CancelFunc
}

// parallel is how many runs go at once: two per core, since a run mostly
// waits on its faults, at least two.
func (o ExploreOptions) parallel() int {
	if o.Parallel > 0 {
		return o.Parallel
	}
	return max(2, 2*runtime.NumCPU())
}

func (o ExploreOptions) env() experiment.Env {
	if o.Env != nil {
		return o.Env()
	}
	return experiment.Env{}
}

// Explore builds the learner's code and the reference, then explores.
func Explore(ctx context.Context, o ExploreOptions) (*ExploreReport, error) {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	x := &explorer{o: o, start: time.Now(), confirmQuick: confirmQuick, report: &ExploreReport{Lab: o.Lab.ID}}
	x.run = x.runLab
	var err error
	if o.Source == "" {
		x.bin, err = Build(ctx, o.Root, o.Lab, false)
	} else {
		x.bin, err = BuildWith(ctx, o.Root, o.Lab, o.Source)
	}
	if err != nil {
		return nil, err
	}
	if x.ref, err = Build(ctx, o.Root, o.Lab, true); err != nil {
		return nil, fmt.Errorf("build the reference: %w", err)
	}
	if err := x.calm(ctx); err != nil {
		return nil, err
	}
	if x.report.Calm == nil {
		x.explore(ctx, x.plan())
	}
	x.report.Took = time.Since(x.start)
	return x.report, ctx.Err()
}

// runLab runs bin (the learner's, or with reference the reference's)
// under faults and returns its history.
func (x *explorer) runLab(ctx context.Context, reference bool, faults []history.RequestFault, p history.Params, sites bool) (history.History, error) {
	bin := x.bin
	if reference {
		bin = x.ref
	}
	spec := x.o.Lab.Spec(bin, reference, "")
	spec.Sites = sites
	for i := range faults {
		f := faults[i]
		p.Faults = append(p.Faults, history.ScheduledFault{Kind: RequestArmed, Replica: f.Replica, Request: &f})
	}
	run, err := Start(ctx, spec, p, x.o.env(), nil)
	if err != nil {
		return history.History{}, err
	}
	if _, err := run.Wait(); err != nil {
		return run.History(), err
	}
	return run.History(), nil
}

// calm runs the learner's code and the reference without faults, each
// reporting the call sites it reaches, and lays out the grid.
func (x *explorer) calm(ctx context.Context) error {
	var mine, ref history.History
	var errMine, errRef error
	var wg sync.WaitGroup
	x.mu.Lock()
	x.report.Planned += 2
	x.mu.Unlock()
	wg.Go(func() { mine, errMine = x.run(ctx, false, nil, history.Params{Seed: x.o.Seed}, true) })
	wg.Go(func() { ref, errRef = x.run(ctx, true, nil, history.Params{Seed: x.o.Seed}, true) })
	wg.Wait()
	if errMine != nil {
		return fmt.Errorf("calm run of your code: %w", errMine)
	}
	if errRef != nil {
		return fmt.Errorf("calm run of the reference: %w", errRef)
	}
	x.report.Runs = 2
	x.report.CalmRun = mine
	if mine.Verdict != nil && !mine.Verdict.Showed {
		x.report.Calm = failed(*mine.Verdict)
		if ref.Verdict != nil && !ref.Verdict.Showed {
			// The reference broke a rule in its calm run too (on a
			// loaded machine, a newcomer's rebalancing can outlast a
			// bound): only the rules it kept count against the learner.
			theirs := failed(*ref.Verdict)
			x.report.Limits = append(x.report.Limits, Limit{Learner: x.report.Calm, Reference: theirs})
			if x.report.Calm = beyond(x.report.Calm, theirs); len(x.report.Calm) == 0 {
				x.report.Calm = nil
			}
		}
	}
	x.refSites = Reached(&ref)
	x.report.Grid = grid(Reached(&mine))
	for _, r := range Reached(&mine) {
		if r.HitRole == replica.RoleWaiter && !r.Site.Stream() {
			// The first request a waiter sent: where a refusal is
			// tried first (tier).
			x.firstWaiter = r.Site
			break
		}
	}
	return nil
}

// failed are a verdict's findings that did not hold.
func failed(v history.Verdict) []history.Finding {
	var out []history.Finding
	for _, f := range v.Findings {
		if !f.Held {
			out = append(out, f)
		}
	}
	return out
}

// Reached lists the call sites a run's replicas reached, each site and
// role once, in the order first reached (Site, HitRole, HitReplica set).
func Reached(h *history.History) []history.RequestFault {
	var out []history.RequestFault
	seen := map[string]bool{}
	for _, e := range h.Events {
		if e.Kind != history.Note || e.Facts == nil || e.Facts.Op != history.OpReached || e.Facts.Request == nil {
			continue
		}
		r := *e.Facts.Request
		if k := r.Site.Key() + " " + r.HitRole; !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// grid lays out one row per reached site and role, every cell not
// tried yet, in the order of the source.
func grid(reached []history.RequestFault) []SiteRow {
	var rows []SiteRow
	for _, r := range reached {
		cells := map[history.FaultAt]Cell{}
		for _, k := range history.FaultKinds() {
			cells[k] = CellNotTried
		}
		rows = append(rows, SiteRow{Site: r.Site, Role: r.HitRole, Cells: cells})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Site.File != b.Site.File {
			return a.Site.File < b.Site.File
		}
		if a.Site.Line != b.Site.Line {
			return a.Site.Line < b.Site.Line
		}
		return a.Role < b.Role
	})
	return rows
}

// depth1 is one run per reached site, fault kind and role, in tiers by
// kind (the stop and the held request open the widest windows; each move
// of etcd's leader needs a 3-member cluster, so those come last), the
// runs in each tier in an order the seed fixes; the few runs tier brings
// into the first tier lead it, so the shuffle of the others is as it was.
func (x *explorer) depth1() []plannedRun {
	tiers := make([][]plannedRun, len(exploreOrder))
	var front []plannedRun // brought into the first tier by tier: they lead it
	id := 1
	for _, row := range x.report.Grid {
		for _, k := range history.FaultKinds() {
			f := history.RequestFault{ID: id, Fault: k, Role: row.Role, Site: row.Site, Occurrence: 1}
			id++
			pr := plannedRun{faults: []history.RequestFault{f}}
			t := x.tier(row.Site, row.Role, k)
			if t == 0 && tierOf(row.Site, k) != 0 {
				front = append(front, pr)
				continue
			}
			tiers[t] = append(tiers[t], pr)
		}
	}
	rng := rand.New(rand.NewPCG(x.o.Seed, 0x6578706c6f7265))
	plan := front
	for _, t := range tiers {
		rng.Shuffle(len(t), func(i, j int) { t[i], t[j] = t[j], t[i] })
		plan = append(plan, t...)
	}
	return plan
}

// exploreOrder is the order of the fault kinds' tiers at a request,
// watchOrder at a watch and keepAliveOrder at a keep-alive (the
// refusal and the end of the lease after the older kinds, but where
// tier brings them forward; the stop's kinds last, but for stopWave,
// which comes first of all):
// at a watch,
// opening it late and stopping the replica at its first answer share
// the first tier (a watch from "now" misses what changed between the
// read before it and its start; a candidate stopped as its wait ends
// wakes with its lease gone: the two commonest watch bugs), then a
// watch etcd cancels; at a keep-alive, one that ends (a leader whose
// lease runs out while it works).
var (
	exploreOrder   = []history.FaultAt{history.PauseAfter, history.HoldRequest, history.LoseAnswer, history.CutAfter, history.FailBefore, history.LeaderAfter, history.RefuseWrites, history.RevokeLease, history.SeverAfter, history.StopAfter}
	watchOrder     = []history.FaultAt{history.HoldRequest, history.PauseAfter, history.FailBefore, history.LoseAnswer, history.CutAfter, history.LeaderAfter, history.RefuseWrites, history.RevokeLease, history.SeverAfter, history.StopAfter}
	keepAliveOrder = []history.FaultAt{history.FailBefore, history.PauseAfter, history.HoldRequest, history.LoseAnswer, history.CutAfter, history.LeaderAfter, history.RefuseWrites, history.RevokeLease, history.SeverAfter, history.StopAfter}
)

// tierOf is the tier of fault kind k at site s.
func tierOf(s history.CallSite, k history.FaultAt) int {
	switch s.RPC {
	case replica.StreamWatch:
		// The first two kinds share the first tier.
		return max(0, slices.Index(watchOrder, k)-1)
	case replica.StreamKeepAlive:
		return slices.Index(keepAliveOrder, k)
	}
	return slices.Index(exploreOrder, k)
}

// plan is the order of the runs after the calm ones: a few runs of the
// stop's kinds (stopWave), then the first tier of depth 1 (each site
// and role with the kind most likely to show something there), then a
// first wave of pairs (as many as run at once), then the rest of depth
// 1, then the rest of the pairs, while the budget lasts. The stops come
// first: a replica that hangs as it is told to stop, or leaves its
// lease behind, shows under them every time and under nothing else so
// steadily, and a first tier cut short by the budget (shrinking and
// confirming a failure that does not come back take a third of it) left
// them out (lab 07's default_ttl, whose 60 s lease a severed leader
// cannot revoke). A bug that needs two faults is tried within any
// budget that gets past the first tier, and one fault at a time still
// comes first.
func (x *explorer) plan() []plannedRun {
	one, first := x.depth1(), 0
	for first < len(one) && x.firstTier(one[first].faults[0]) {
		first++
	}
	two := x.pairs()
	wave := min(len(two), x.o.parallel())
	stops, rest := x.stopWave(one[first:])
	plan := append([]plannedRun{}, stops...)
	plan = append(plan, one[:first]...)
	plan = append(plan, two[:wave]...)
	plan = append(plan, rest...)
	return append(plan, two[wave:]...)
}

// firstTier says whether f is in depth 1's first tier at its site.
func (x *explorer) firstTier(f history.RequestFault) bool {
	return x.tier(f.Site, f.Role, f.Fault) == 0
}

// tier is the tier of fault kind k at a site in a role: tierOf's, but
// two runs of the kinds that come last elsewhere are brought into the
// first tier where they are the likeliest to show something. A refusal
// at the first request a waiter sends, in a lab whose rules judge the
// request rate (wherever it is refused, a retry loop that does not pause
// spins: one run tells). The end of the lease under an owner's delete
// (a plain delete is the write that does not need the lease: sent after
// the lease ended, it removes whatever holds the key by then). A failed
// write, once a site (the step-down's, most often: what a candidate does
// when its Resign or Release fails is where a lease is left behind; a
// leader that has stepped down by its own events sends it as a waiter).
func (x *explorer) tier(site history.CallSite, role string, k history.FaultAt) int {
	switch {
	case k == history.FailBefore && ownerWrite[site.RPC] && role == x.writeRole(site):
		return 0
	case k == history.RefuseWrites && x.paced() && role == replica.RoleWaiter && site.Key() == x.firstWaiter.Key():
		return 0
	case k == history.RevokeLease && role == replica.RoleOwner && site.RPC == "DeleteRange":
		return 0
	}
	return tierOf(site, k)
}

// ownerWrite are the RPCs a failed write is tried first at.
var ownerWrite = map[string]bool{"Txn": true, "Put": true, "DeleteRange": true}

// writeRole is the role whose failed write at site is tried first: the
// owner where the owner sends it, else a waiter, else the newcomer.
func (x *explorer) writeRole(site history.CallSite) string {
	if x.report == nil {
		return replica.RoleOwner
	}
	roles := map[string]bool{}
	for _, row := range x.report.Grid {
		if row.Site.Key() == site.Key() {
			roles[row.Role] = true
		}
	}
	for _, r := range []string{replica.RoleOwner, replica.RoleWaiter, replica.RoleNewcomer} {
		if roles[r] {
			return r
		}
	}
	return replica.RoleOwner
}

// paced says whether the lab's rules judge the request rate while etcd
// refuses (pacedRetries).
func (x *explorer) paced() bool {
	sc := x.o.Lab.scenario
	return sc != nil && slices.ContainsFunc(sc.Shows, func(p history.Property) bool { return p.Name == pacedRetries.Name })
}

// Pairs where they can matter: the first fault takes the owner out of
// the way (a stop, a cut, a stream of its that fails), the second hits
// a waiter or the newcomer, who takes over meanwhile, at a request of
// its own (a stop, a held or lost request, a failed one): a takeover
// that goes wrong only when the one taking over is hit too.
var (
	pairOwner = []history.FaultAt{history.PauseAfter, history.CutAfter, history.FailBefore}
	pairOther = []history.FaultAt{history.PauseAfter, history.HoldRequest, history.LoseAnswer, history.FailBefore}
)

// pairs is two faults a run, one on the owner and one on another role,
// the kinds of pairOwner and pairOther (two sites or roles, when the
// owner sends no request), in an order the seed fixes.
func (x *explorer) pairs() []plannedRun {
	one := x.depth1()
	var owner, other []history.RequestFault
	for _, pr := range one {
		f := pr.faults[0]
		switch {
		case f.Role == replica.RoleOwner && slices.Contains(pairOwner, f.Fault):
			owner = append(owner, f)
		case f.Role != replica.RoleOwner && slices.Contains(pairOther, f.Fault):
			other = append(other, f)
		}
	}
	if len(owner) == 0 {
		// No request is sent as the owner (lab 05's holder writes to the
		// resource, and steps down before its Release): the first fault
		// takes out whoever is at a site, the second hits another site
		// or role.
		for _, pr := range one {
			if f := pr.faults[0]; slices.Contains(pairOwner, f.Fault) {
				owner = append(owner, f)
			}
		}
	}
	var plan []plannedRun
	for _, a := range owner {
		for _, b := range other {
			if a.Site.Key() == b.Site.Key() && a.Role == b.Role {
				continue
			}
			b.ID = a.ID + 10000
			plan = append(plan, plannedRun{faults: []history.RequestFault{a, b}})
		}
	}
	rng := rand.New(rand.NewPCG(x.o.Seed, 0x7061697273))
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	return plan
}

// stop says whether exploration should plan no more runs.
func (x *explorer) stop(ctx context.Context) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return ctx.Err() != nil || (x.found && !x.o.All) || time.Since(x.start) >= x.o.Budget
}

// ownEnough: a run started now is expected to end within the budget.
func (x *explorer) roomFor(expect time.Duration) bool {
	return time.Since(x.start)+expect <= x.o.Budget
}

// runExpect is what one run under faults takes on a quiet machine.
const runExpect = 18 * time.Second

// explore runs the plan, Parallel at a time, within the budget.
func (x *explorer) explore(ctx context.Context, plan []plannedRun) {
	x.mu.Lock()
	x.report.Planned += len(plan)
	x.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x.mu.Lock()
	x.endRest = cancel
	x.mu.Unlock()
	slots := make(chan struct{}, x.o.parallel())
	var wg sync.WaitGroup
	for i, pr := range plan {
		slots <- struct{}{}
		if x.stop(ctx) || !x.roomFor(runExpect) {
			<-slots
			x.mu.Lock()
			x.report.Skipped += len(plan) - i
			x.mu.Unlock()
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			x.try(ctx, pr)
		})
	}
	wg.Wait()
}

// longerRun is a violation's run before shrinking stopped it early, and
// the note shrinking made of the stop.
type longerRun struct {
	history history.History
	stop    string
}

// try runs one planned run, judges it against the reference if it broke
// a rule, and marks the grid.
func (x *explorer) try(ctx context.Context, pr plannedRun) {
	x.quiet.RLock()
	h, err := x.run(ctx, false, pr.faults, history.Params{Seed: x.o.Seed}, false)
	x.quiet.RUnlock()
	cell, last := CellHeld, "held"
	fired := Fired(&h)
	switch {
	case ctx.Err() != nil:
		cell, last = CellNotTried, "stopped: a violation was found meanwhile"
	case err != nil || h.Verdict == nil:
		cell, last = CellNotTried, fmt.Sprintf("could not run: %v", err)
	case len(fired) < len(pr.faults):
		cell, last = CellNotReached, "the request was not sent again under faults"
	case !h.Verdict.Showed:
		cell, last = x.judge(ctx, pr, h)
	}
	x.mark(pr, cell, last)
}

// mark records one run's end in the grid and tells the progress.
func (x *explorer) mark(pr plannedRun, cell Cell, last string) {
	x.mu.Lock()
	x.report.Runs++
	x.done++
	if len(pr.faults) == 1 {
		f := pr.faults[0]
		for i := range x.report.Grid {
			row := &x.report.Grid[i]
			if row.Site.Key() == f.Site.Key() && row.Role == f.Role && rank(cell) > rank(row.Cells[f.Fault]) {
				row.Cells[f.Fault] = cell
			}
		}
	}
	p := x.progressLocked(describe(pr.faults) + ": " + last)
	x.mu.Unlock()
	x.tell(p)
}

// progressLocked is how far the exploration got (x.mu held).
func (x *explorer) progressLocked(last string) ExploreProgress {
	p := ExploreProgress{Done: x.done, Planned: x.report.Planned, Last: last}
	covered := map[string]bool{}
	for _, row := range x.report.Grid {
		covered[row.Site.Key()] = covered[row.Site.Key()] || slices.ContainsFunc(history.FaultKinds(), func(k history.FaultAt) bool { return row.Cells[k] != CellNotTried })
	}
	p.Sites = len(covered)
	for _, c := range covered {
		if c {
			p.Covered++
		}
	}
	return p
}

// tell passes progress on, if anyone listens.
func (x *explorer) tell(p ExploreProgress) {
	if x.o.Progress != nil {
		x.o.Progress(p)
	}
}

// rank orders the cells: a cell shows the worst of its runs.
func rank(c Cell) int {
	return slices.Index([]Cell{CellNotTried, CellNotReached, CellHeld, CellUnconfirmed, CellLimit, CellViolated}, c)
}

// describe says a run's faults in a line.
func describe(fs []history.RequestFault) string {
	s := ""
	for i, f := range fs {
		if i > 0 {
			s += "; "
		}
		s += f.String()
	}
	return s
}
