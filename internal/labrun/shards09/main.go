// Command shards09 is one replica of lab 09 under a lab run: it runs the
// learner's shards.Worker (labs/09_shards, or the reference through a
// build overlay) over replica.Shards shards, reports every change of its Owned()
// as the shards it owns, and commits an offset for each shard it owns
// every 100 ms with the learner's CommitOffset and that shard's token. It
// is built and started by internal/labrun, never by hand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/labrun/replica"
	"github.com/ownership-election/playground/labs"
	shards "github.com/ownership-election/playground/labs/09_shards"
)

const (
	// commitEvery is how often a worker commits an offset for each shard
	// it owns; lookEvery how often Owned() is compared with what was
	// last reported.
	commitEvery = 100 * time.Millisecond
	lookEvery   = 20 * time.Millisecond
)

// Returned is the note that tells the playground the Worker's Run
// returned once it was told to stop.
const Returned = "Worker.Run returned"

func main() { os.Exit(run()) }

func run() int {
	p, code := replica.Start()
	if p == nil {
		return code
	}
	defer p.Close()
	cfg, cli := p.Config, p.Client
	// The lab's requests go through a spy, so that the deletes they make
	// can be reported with their revisions: a shard key that etcd's watch
	// saw deleted is then known to be this worker's doing (or not), which
	// a watch alone cannot say (history.Takeovers).
	spy := replica.NewSpy(cli.KV)
	cli.KV = spy
	// Its commits are this program's, every commitEvery for each shard
	// owned, not the worker's own retries.
	p.Conn.Clocked("CommitOffset")
	w := &shards.Worker{Client: cli, Prefix: cfg.Prefix, Name: cfg.Name, Shards: replica.Shards, TTL: cfg.TTL}
	rep := &reporter{conn: p.Conn, cli: cli, spy: spy, cfg: cfg, w: w, seen: map[int]int64{}}
	p.Conn.Emit(replica.Event{Kind: "running", Text: fmt.Sprintf("the lab's Worker.Run started (%d shards)", replica.Shards)})
	var wg sync.WaitGroup
	lctx, endLooks := context.WithCancel(context.Background())
	wg.Go(func() { rep.look(lctx) })
	wg.Go(func() { rep.commit(p.Ctx) })
	err := w.Run(p.Ctx)
	endLooks()
	wg.Wait()
	rep.report() // what Owned() says now that Run returned
	rep.reportDeletes()
	return p.Finish(err, replica.Ending{Call: "Worker.Run",
		Early:   "a worker must keep its share until it is stopped",
		Stopped: Returned + " nil after its context ended"})
}

// reporter tells the playground what the worker owns and commits.
type reporter struct {
	conn *replica.Conn
	cli  *clientv3.Client
	spy  *replica.Spy
	cfg  replica.Config
	w    *shards.Worker

	mu   sync.Mutex
	seen map[int]int64 // Owned() as last reported

	notWritten sync.Once
}

// look reports Owned() whenever it changes, until ctx ends.
func (r *reporter) look(ctx context.Context) {
	t := time.NewTicker(lookEvery)
	defer t.Stop()
	for {
		r.report()
		r.reportDeletes()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// report sends one event for each shard that left Owned() or joined it
// since the last report, then owns when the worker begins to own
// something (which makes it a schedule's target: each worker owns its own
// shards, so this is not the sole ownership an acquired event claims) and
// stepped-down when it owns nothing any more.
func (r *reporter) report() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.w.Owned()
	had := len(r.seen) > 0
	for _, s := range sortedKeys(r.seen) {
		if tok, ok := now[s]; !ok || tok != r.seen[s] {
			r.shardEvent("disown", s, r.seen[s], fmt.Sprintf("Owned() no longer lists shard %d (token %d)", s, r.seen[s]))
			delete(r.seen, s)
		}
	}
	for _, s := range sortedKeys(now) {
		if _, ok := r.seen[s]; !ok {
			r.shardEvent("own", s, now[s], fmt.Sprintf("Owned() lists shard %d with token %d", s, now[s]))
			r.seen[s] = now[s]
		}
	}
	switch has := len(r.seen) > 0; {
	case has && !had:
		r.conn.Emit(replica.Event{Kind: "owns", Token: minToken(r.seen), Text: fmt.Sprintf("owns shards %v", sortedKeys(r.seen))})
	case !has && had:
		r.conn.Emit(replica.Event{Kind: "stepped-down", Text: "Owned() is empty: owns no shard"})
	}
}

// reportDeletes sends one note for each answer of etcd, since the last
// call, that says the lab's request deleted keys: the revision is what
// ties the key watch's delete to this worker. Puts are not sent (a
// shard key's value names its writer, and a commit's offset its
// process), nor reads.
func (r *reporter) reportDeletes() {
	for _, a := range r.spy.Take() {
		if a.Deleted > 0 {
			r.conn.Emit(replica.Event{Kind: "note", Text: fmt.Sprintf("a request of its code deleted %d key(s) at revision %d", a.Deleted, a.Revision),
				Facts: &replica.Facts{Op: "deleted", Revision: a.Revision, Deleted: a.Deleted, Succeeded: true, Changed: []int64{a.Revision}}})
		}
	}
}

func (r *reporter) shardEvent(op string, shard int, token int64, text string) {
	r.conn.Emit(replica.Event{Kind: "note", Text: text,
		Facts: &replica.Facts{Op: op, Key: shards.ShardKey(r.cfg.Prefix, shard), Token: token, Succeeded: true}})
}

// commit commits an offset for every shard the worker owns, every
// commitEvery, until ctx ends. Like a consumer that commits the batch it
// fetched a moment ago, each round commits the shards Owned() listed a
// round earlier, with their tokens then: a process held up, at the
// checkpoint before a commit or in a call on a frozen network, wakes
// with a batch from before the pause. Each offset is unique to this
// process and grows, so the playground can tell from etcd's watch whose
// commit landed: the process's start in milliseconds times 10 plus its
// replica number, then 10 more each time.
func (r *reporter) commit(ctx context.Context) {
	idx, _ := strconv.Atoi(r.cfg.Name[len(r.cfg.Name)-1:])
	next := time.Now().UnixMilli()*10 + int64(idx)
	t := time.NewTicker(commitEvery)
	defer t.Stop()
	var batch map[int]int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fetched := r.w.Owned()
		for _, s := range sortedKeys(batch) {
			if r.conn.Checkpoint() != nil {
				return
			}
			next += 10
			r.commitOne(ctx, s, batch[s], next)
		}
		batch = fetched
	}
}

func (r *reporter) commitOne(ctx context.Context, shard int, token, offset int64) {
	err := shards.CommitOffset(ctx, r.cli, r.cfg.Prefix, shard, token, offset)
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, labs.ErrNotImplemented) {
		r.notWritten.Do(func() {
			r.conn.Emit(replica.Event{Kind: "not-written", Text: "CommitOffset returned labs.ErrNotImplemented: the lab is not written yet"})
		})
		return
	}
	f := &replica.Facts{Op: "commit", Key: shards.OffsetKey(r.cfg.Prefix, shard), Token: token, Succeeded: err == nil}
	text := fmt.Sprintf("CommitOffset(shard %d, token %d, offset %d): committed", shard, token, offset)
	switch {
	case errors.Is(err, shards.ErrNotOwner):
		text = fmt.Sprintf("CommitOffset(shard %d, token %d, offset %d): refused, not the owner", shard, token, offset)
	case err != nil:
		f.Err = err.Error()
		text = fmt.Sprintf("CommitOffset(shard %d, token %d, offset %d) failed: %v", shard, token, offset, err)
	}
	r.conn.Emit(replica.Event{Kind: "note", Text: text, Value: float64(offset), Facts: f})
}

func sortedKeys(m map[int]int64) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func minToken(m map[int]int64) int64 {
	var best int64
	for _, t := range m {
		if best == 0 || t < best {
			best = t
		}
	}
	return best
}
