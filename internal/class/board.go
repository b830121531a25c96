package class

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Board is the instructor's view of the class: every learner on the
// roster and the summary each last published (absent until they do).
type Board struct {
	mu        sync.Mutex
	learners  []string
	summaries map[string]Summary
	rev       int64 // store revision the board was read at
}

// maxTxnOps stays under etcd's default limit of operations per
// transaction (128), so a large class is read in a few round trips.
const maxTxnOps = 100

// LoadBoard reads the roster and every learner's summary, with a client
// authenticated as root (or a user allowed to read every prefix).
func LoadBoard(ctx context.Context, root *clientv3.Client) (*Board, error) {
	names, err := Roster(ctx, root)
	if err != nil {
		return nil, err
	}
	b := &Board{learners: names, summaries: map[string]Summary{}}
	for start := 0; start < len(names); start += maxTxnOps {
		batch := names[start:min(start+maxTxnOps, len(names))]
		ops := make([]clientv3.Op, len(batch))
		for i, n := range batch {
			ops[i] = clientv3.OpGet(Prefix(n) + SummaryKey)
		}
		r, err := root.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, fmt.Errorf("read class summaries: %w", err)
		}
		if start == 0 {
			b.rev = r.Header.Revision
		}
		for i, resp := range r.Responses {
			kvs := resp.GetResponseRange().Kvs
			if len(kvs) == 0 {
				continue
			}
			if s, err := decodeSummary(kvs[0].Value); err == nil {
				s.Learner = batch[i]
				b.summaries[batch[i]] = s
			}
		}
	}
	return b, nil
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
		out[i] = s
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

// Watch keeps the board current until ctx ends: it watches the roster and
// every learner's summary key from the revision the board was read at, so
// no publication between the read and the watch is missed. changed is
// called (from the watch goroutine) with the learner whose line changed.
// Watches survive a member failure: the client resumes them on another
// member from the last revision seen.
func (b *Board) Watch(ctx context.Context, root *clientv3.Client, changed func(learner string)) error {
	ctx = clientv3.WithRequireLeader(ctx)
	from := clientv3.WithRev(b.rev + 1)
	roster := root.Watch(ctx, RosterPrefix, clientv3.WithPrefix(), from)
	// One watch over every prefix would also carry every experiment and
	// lab write of the whole class; a watch per summary key carries only
	// what the board shows. They share one gRPC stream.
	summaries := make(chan string, 64)
	var wg sync.WaitGroup
	watchOne := func(name string, rev clientv3.OpOption) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for resp := range root.Watch(ctx, Prefix(name)+SummaryKey, rev) {
				for _, ev := range resp.Events {
					if ev.Type != clientv3.EventTypePut {
						continue
					}
					if s, err := decodeSummary(ev.Kv.Value); err == nil {
						b.set(name, s)
						select {
						case summaries <- name:
						case <-ctx.Done():
							return
						}
					}
				}
			}
		}()
	}
	for _, n := range b.Learners() {
		watchOne(n, from)
	}
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case name := <-summaries:
			if changed != nil {
				changed(name)
			}
		case resp, ok := <-roster:
			if !ok {
				return ctx.Err()
			}
			if err := resp.Err(); err != nil {
				return fmt.Errorf("watch the class roster: %w", err)
			}
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut || ev.IsModify() {
					continue
				}
				name := strings.TrimPrefix(string(ev.Kv.Key), RosterPrefix)
				b.addLearner(name)
				watchOne(name, clientv3.WithRev(ev.Kv.ModRevision))
				if changed != nil {
					changed(name)
				}
			}
		}
	}
}
