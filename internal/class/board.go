package class

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/sentence"
)

// Board is the instructor's view of the class: every learner on the
// roster and the summary each last published (absent until they do).
type Board struct {
	mu        sync.Mutex
	learners  []string
	summaries map[string]Summary
	subs      map[string]map[string]int64   // learner → lab → mod revision of its submission
	verdicts  map[string]map[string]Verdict // learner → lab → the instructor's verdict
	rev       int64                         // store revision the board was read at
	state     State
	budget    int64 // bytes a learner may keep (SetBudget); 0: not checked
}

// SetBudget makes Watch measure, every usageEvery, what each learner
// keeps under their prefix, and name in State.OverBudget those over
// budget. Call it before Watch.
func (b *Board) SetBudget(budget int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.budget = budget
}

// maxTxnOps is how many summaries one read asks for. Summaries are a few
// kilobytes, but a learner may write anything up to etcd's request limit
// (1.5 MiB) under their key; 16 of those are 24 MiB in one answer, so a
// class of 200 is read in 13 round trips without a flood swelling the
// board.
const maxTxnOps = 16

// LoadBoard reads the roster and every learner's summary, with a client
// authenticated as root (or a user allowed to read every prefix).
func LoadBoard(ctx context.Context, root *clientv3.Client) (*Board, error) {
	names, err := Roster(ctx, root)
	if err != nil {
		return nil, err
	}
	b := &Board{learners: names, summaries: map[string]Summary{}, subs: map[string]map[string]int64{}}
	// The verdicts first: the watch starts after the earliest read, so
	// whatever changed during the reads comes again through it.
	if b.verdicts, b.rev, err = Verdicts(ctx, root); err != nil {
		return nil, err
	}
	for start := 0; start < len(names); start += maxTxnOps {
		if err := b.loadBatch(ctx, root, names[start:min(start+maxTxnOps, len(names))]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// loadBatch reads a few learners' summaries and which labs they have
// submitted (keys only: the board needs the revisions, not the files).
func (b *Board) loadBatch(ctx context.Context, root *clientv3.Client, batch []string) error {
	ops := make([]clientv3.Op, 0, 2*len(batch))
	for _, n := range batch {
		ops = append(ops, clientv3.OpGet(Prefix(n)+SummaryKey),
			clientv3.OpGet(Prefix(n)+SubmissionPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly()))
	}
	r, err := root.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("read class summaries: %w", err)
	}
	for i, n := range batch {
		if kvs := r.Responses[2*i].GetResponseRange().Kvs; len(kvs) > 0 {
			b.summaries[n] = readSummary(n, kvs[0].Value)
		}
		for _, kv := range r.Responses[2*i+1].GetResponseRange().Kvs {
			b.setSubmission(n, strings.TrimPrefix(string(kv.Key), Prefix(n)+SubmissionPrefix), kv.ModRevision)
		}
	}
	return nil
}

// setSubmission records (rev > 0) or forgets (rev 0) a learner's
// submission of lab.
func (b *Board) setSubmission(learner, lab string, rev int64) {
	if rev == 0 {
		delete(b.subs[learner], lab)
		return
	}
	if b.subs[learner] == nil {
		b.subs[learner] = map[string]int64{}
	}
	b.subs[learner][lab] = rev
}

// Learners returns the roster, sorted.
func (b *Board) Learners() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.learners...)
}

// Summary returns a learner's summary and whether they published one.
func (b *Board) Summary(name string) (Summary, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.summaries[name]
	return s, ok
}

// Snapshot returns every learner's summary (zero for those without one),
// in roster order.
func (b *Board) Snapshot() []Summary {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Summary, len(b.learners))
	for i, n := range b.learners {
		s := b.summaries[n]
		s.Learner = n
		s.Checked = b.checkedLocked(n, s)
		out[i] = s
	}
	return out
}

// checkedLocked is, for each lab the summary says passed, whether the
// instructor's regrade of the submitted file verified it, refused it, or
// has not judged it yet (a claim; also when the file judged is not the
// one submitted last).
func (b *Board) checkedLocked(learner string, s Summary) map[string]Check {
	out := map[string]Check{}
	for lab := range s.Labs {
		c := Check{State: Claimed}
		v, ok := b.verdicts[learner][lab]
		if rev := b.subs[learner][lab]; ok && rev != 0 && v.Rev == rev {
			c = Check{State: Verified}
			if !v.Verified {
				c = Check{State: Refused, Reason: v.Reason}
			}
		}
		out[lab] = c
	}
	return out
}

func (b *Board) set(name string, s Summary) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s.Learner = name
	b.summaries[name] = s
	b.insertLocked(name)
}

func (b *Board) addLearner(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.insertLocked(name)
}

// insertLocked adds name to the sorted roster unless it is there.
func (b *Board) insertLocked(name string) {
	i := sort.SearchStrings(b.learners, name)
	if i == len(b.learners) || b.learners[i] != name {
		b.learners = append(b.learners, "")
		copy(b.learners[i+1:], b.learners[i:])
		b.learners[i] = name
	}
}

// State is how the board's view of the cluster stands: live while its
// watch runs, reconnecting (with the reason) after the cluster failed it,
// and any alarm the cluster raised (a full database stops every learner's
// writes, so the board says so first).
type State struct {
	Live   bool
	Reason string // why the board is not live, in a line
	Alarm  string // an alarm the cluster reports, "" when none
	// OverBudget names the learners who keep more than the budget under
	// their prefix (SetBudget), "" when none does.
	OverBudget string
}

// State returns the board's state; Watch keeps it current.
func (b *Board) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

func (b *Board) setState(st State) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	changed := b.state != st
	b.state = st
	return changed
}

// replace takes a fresh read's roster, summaries and revision.
func (b *Board) replace(o *Board) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.learners, b.summaries, b.rev = o.learners, o.summaries, o.rev
	b.subs, b.verdicts = o.subs, o.verdicts
}

func (b *Board) remove(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.summaries, name)
	if i, ok := slices.BinarySearch(b.learners, name); ok {
		b.learners = slices.Delete(b.learners, i, i+1)
	}
}

func (b *Board) revision() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rev
}

// Everyone is the name Watch passes to changed when the whole board may
// have changed (a re-read, a change of State).
const Everyone = ""

// Board timings: how often the cluster is probed while the watch is
// quiet, how long a probe may take, and the longest wait between
// reconnection attempts.
const (
	probeEvery   = 3 * time.Second
	probeTimeout = 3 * time.Second
	maxBackoff   = 5 * time.Second
	// usageEvery is how often the budget is checked: measuring reads
	// every value the class keeps.
	usageEvery = time.Minute
)

// Watch keeps the board current until ctx ends, and returns nil then. It
// watches the roster and every learner's summary key from the revision
// the board was read at, so nothing published between the read and the
// watch is missed. When the cluster fails the watch (a leader change, a
// lost member, a compaction) or stops answering the board's probe, the
// board says it is reconnecting, reads everything again and watches on
// from there. changed is called (from Watch's goroutines) with the learner
// whose line changed, or Everyone.
func (b *Board) Watch(ctx context.Context, root *clientv3.Client, changed func(learner string)) error {
	if changed == nil {
		changed = func(string) {}
	}
	b.setState(State{Live: true})
	backoff := 250 * time.Millisecond
	for {
		err := b.watchOnce(ctx, root, changed)
		if ctx.Err() != nil {
			return nil
		}
		b.setState(State{Reason: reconnectReason(err), Alarm: b.State().Alarm, OverBudget: b.State().OverBudget})
		changed(Everyone)
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			fresh, err := LoadBoard(ctx, root)
			if err == nil {
				b.replace(fresh)
				break
			}
			if ctx.Err() != nil {
				return nil
			}
			b.setState(State{Reason: reconnectReason(err), Alarm: b.State().Alarm, OverBudget: b.State().OverBudget})
		}
		backoff = 250 * time.Millisecond
		b.setState(State{Live: true, Alarm: b.State().Alarm, OverBudget: b.State().OverBudget})
		changed(Everyone)
	}
}

func reconnectReason(err error) string {
	if err == nil {
		return "the watch ended"
	}
	return sentence.FirstLine(err.Error())
}

// watchOnce watches from the board's revision until a watch fails or the
// probe finds the cluster gone; it returns why.
func (b *Board) watchOnce(ctx context.Context, root *clientv3.Client, changed func(string)) error {
	ctx, cancel := context.WithCancelCause(clientv3.WithRequireLeader(ctx))
	defer cancel(nil)
	fail := func(err error) { cancel(err) }
	from := clientv3.WithRev(b.revision() + 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	watchOne := func(name string, rev clientv3.OpOption) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.followLearner(ctx, root, name, rev, changed, fail)
		}()
	}
	for _, n := range b.Learners() {
		watchOne(n, from)
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		b.followRoster(ctx, root, from, watchOne, changed, fail)
	}()
	go func() {
		defer wg.Done()
		b.followVerdicts(ctx, root, from, changed, fail)
	}()
	go func() {
		defer wg.Done()
		b.probe(ctx, root, changed, fail)
	}()
	<-ctx.Done()
	return context.Cause(ctx)
}

// followLearner applies one learner's changes under their class keys: a
// summary put replaces the line (an unreadable value shows as invalid
// rather than leaving the old values up), a delete clears it; a
// submission put or delete changes which file a verdict must match.
func (b *Board) followLearner(ctx context.Context, root *clientv3.Client, name string, rev clientv3.OpOption, changed func(string), fail func(error)) {
	for resp := range root.Watch(ctx, Prefix(name)+ClassKeys, clientv3.WithPrefix(), rev) {
		if err := resp.Err(); err != nil {
			fail(fmt.Errorf("watch %s's summary: %w", name, err))
			return
		}
		for _, ev := range resp.Events {
			if b.applyLearnerEvent(name, ev) {
				changed(name)
			}
		}
	}
	if ctx.Err() == nil {
		fail(fmt.Errorf("watch %s's summary: the watch closed", name))
	}
}

func (b *Board) applyLearnerEvent(name string, ev *clientv3.Event) bool {
	if !b.has(name) {
		return false
	}
	key := strings.TrimPrefix(string(ev.Kv.Key), Prefix(name))
	put := ev.Type == clientv3.EventTypePut
	switch {
	case key == SummaryKey:
		s := Summary{Learner: name}
		if put {
			s = readSummary(name, ev.Kv.Value)
		}
		b.set(name, s)
	case strings.HasPrefix(key, SubmissionPrefix):
		rev := int64(0)
		if put {
			rev = ev.Kv.ModRevision
		}
		b.mu.Lock()
		b.setSubmission(name, strings.TrimPrefix(key, SubmissionPrefix), rev)
		b.mu.Unlock()
	default:
		return false
	}
	return true
}

// followVerdicts applies the verdicts `class verify` writes.
func (b *Board) followVerdicts(ctx context.Context, root *clientv3.Client, from clientv3.OpOption, changed func(string), fail func(error)) {
	for resp := range root.Watch(ctx, VerdictPrefix, clientv3.WithPrefix(), from) {
		if err := resp.Err(); err != nil {
			fail(fmt.Errorf("watch the verdicts: %w", err))
			return
		}
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			b.mu.Lock()
			addVerdict(b.verdicts, ev.Kv.Key, ev.Kv.Value)
			b.mu.Unlock()
			learner, _, _ := strings.Cut(strings.TrimPrefix(string(ev.Kv.Key), VerdictPrefix), "/")
			changed(learner)
		}
	}
	if ctx.Err() == nil {
		fail(errors.New("watch the verdicts: the watch closed"))
	}
}

// followRoster adds learners set up after the read and drops the ones
// removed.
func (b *Board) followRoster(ctx context.Context, root *clientv3.Client, from clientv3.OpOption, watchOne func(string, clientv3.OpOption), changed func(string), fail func(error)) {
	for resp := range root.Watch(ctx, RosterPrefix, clientv3.WithPrefix(), from) {
		if err := resp.Err(); err != nil {
			fail(fmt.Errorf("watch the class roster: %w", err))
			return
		}
		for _, ev := range resp.Events {
			name := strings.TrimPrefix(string(ev.Kv.Key), RosterPrefix)
			switch {
			case ev.Type == clientv3.EventTypeDelete:
				b.remove(name)
			case ev.IsCreate() && !b.has(name):
				b.addLearner(name)
				watchOne(name, clientv3.WithRev(ev.Kv.ModRevision))
			default:
				continue
			}
			changed(name)
		}
	}
	if ctx.Err() == nil {
		fail(errors.New("watch the class roster: the watch closed"))
	}
}

// probe asks the cluster for its alarms every few seconds: the answer
// keeps the alarm on the board current, and no answer means the watch is
// waiting on a cluster that is gone (a watch alone would wait silently).
func (b *Board) probe(ctx context.Context, root *clientv3.Client, changed func(string), fail func(error)) {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	var measured time.Time
	for {
		alarm, err := Alarm(ctx, root, probeTimeout)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			fail(fmt.Errorf("the cluster does not answer: %w", err))
			return
		}
		st := b.State()
		st.Alarm = alarm
		if time.Since(measured) >= usageEvery {
			measured = time.Now()
			st.OverBudget = b.overBudget(ctx, root, st.OverBudget)
		}
		if b.setState(st) {
			changed(Everyone)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// overBudget measures the learners against the budget, keeping the last
// line when the measure fails (the probe reports a cluster gone).
func (b *Board) overBudget(ctx context.Context, root *clientv3.Client, last string) string {
	b.mu.Lock()
	budget := b.budget
	b.mu.Unlock()
	if budget <= 0 {
		return ""
	}
	usage, err := MeasureClass(ctx, root, b.Learners(), budget)
	if err != nil {
		return last
	}
	return OverBudget(usage, budget)
}

func (b *Board) has(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := slices.BinarySearch(b.learners, name)
	return ok
}

// Alarm reads the cluster's alarms and describes them in a line, "" when
// there are none. NOSPACE is the one a class meets: a database over its
// quota takes no more writes from anyone until root repairs it.
func Alarm(ctx context.Context, root *clientv3.Client, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := root.AlarmList(ctx)
	if err != nil {
		return "", fmt.Errorf("read the cluster's alarms: %w", err)
	}
	var parts []string
	for _, a := range r.Alarms {
		switch a.Alarm {
		case etcdserverpb.AlarmType_NOSPACE:
			parts = append(parts, "NOSPACE: etcd is full, nobody can save; run playground class repair")
		case etcdserverpb.AlarmType_CORRUPT:
			parts = append(parts, fmt.Sprintf("CORRUPT: member %x reports a corrupt database", a.MemberID))
		}
	}
	return strings.Join(slices.Compact(parts), "; "), nil
}
