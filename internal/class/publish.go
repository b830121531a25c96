package class

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Publisher writes a learner's summary under their prefix. Every write
// merges with what is already there, under a compare-and-swap on the key's
// mod revision, so two playgrounds of one learner (or one restarted with
// an older progress file) never erase each other's passes, and writing
// the same pass twice records it once.
type Publisher struct {
	kv  clientv3.KV // namespaced to the learner's prefix
	key string

	mu    sync.Mutex // serialises Publish
	known bool       // last and rev reflect the store
	last  Summary
	rev   int64 // mod revision of the key as last seen; 0 = absent

	// background loop (Start/Offer/Close)
	wake    chan struct{}
	pending *Summary
	pmu     sync.Mutex
	done    chan struct{}
	cancel  context.CancelFunc
	lastErr error

	course   *Course // when set, a published summary it refuses is replaced, not merged
	replaced bool    // the published value was refused: write even if s adds nothing
}

// NewPublisher publishes through kv, which must already be under the
// learner's prefix (embedetcd.Remote's clients are).
func NewPublisher(kv clientv3.KV) *Publisher {
	return &Publisher{kv: kv, key: SummaryKey}
}

// Against makes the publisher replace a published summary that c refuses
// (Course.Check) instead of merging with it: someone may have written
// nonsense under the learner's key with etcdctl, and merging would keep it
// on the board forever. It returns p.
func (p *Publisher) Against(c Course) *Publisher {
	p.course = &c
	return p
}

// Publish writes s merged with the published summary and returns once etcd
// has it. It does nothing (no request at all) when the published summary
// already covers s.
func (p *Publisher) Publish(ctx context.Context, s Summary) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range 10 {
		if !p.known {
			r, err := p.kv.Get(ctx, p.key)
			if err != nil {
				return fmt.Errorf("read published summary: %w", err)
			}
			if err := p.absorb(r.Kvs); err != nil {
				return err
			}
		}
		if p.rev != 0 && !p.replaced && p.last.covers(s) {
			return nil
		}
		merged := p.last.Merge(s)
		b, err := json.Marshal(merged)
		if err != nil {
			return fmt.Errorf("encode class summary: %w", err)
		}
		r, err := p.kv.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(p.key), "=", p.rev)).
			Then(clientv3.OpPut(p.key, string(b))).
			Else(clientv3.OpGet(p.key)).Commit()
		if err != nil {
			p.known = false // the write may or may not have landed: read again
			return fmt.Errorf("publish class summary: %w", err)
		}
		if r.Succeeded {
			p.last, p.rev, p.replaced = merged, r.Header.Revision, false
			return nil
		}
		if err := p.absorb(r.Responses[0].GetResponseRange().Kvs); err != nil {
			return err
		}
	}
	return fmt.Errorf("publish class summary: the key kept changing under us")
}

func (p *Publisher) absorb(kvs []*mvccpb.KeyValue) error {
	p.known = true
	if len(kvs) == 0 {
		p.last, p.rev, p.replaced = Summary{}, 0, false
		return nil
	}
	s, err := decodeSummary(kvs[0].Value)
	if err != nil || (p.course != nil && len(p.course.Check(s, time.Now())) > 0) {
		// A damaged or impossible summary is replaced rather than kept
		// by every merge.
		s, p.replaced = Summary{}, true
	} else {
		p.replaced = false
	}
	p.last, p.rev = s, kvs[0].ModRevision
	return nil
}

// Start runs a loop that publishes whatever Offer hands it, retrying with
// backoff while the cluster is unreachable, until Close.
func (p *Publisher) Start() *Publisher {
	ctx, cancel := context.WithCancel(context.Background())
	p.wake = make(chan struct{}, 1)
	p.done = make(chan struct{})
	p.cancel = cancel
	go p.loop(ctx)
	return p
}

// Offer hands the loop a summary to publish (merged with any not yet
// written). It never blocks.
func (p *Publisher) Offer(s Summary) {
	p.pmu.Lock()
	if p.pending == nil {
		p.pending = &s
	} else {
		m := p.pending.Merge(s)
		p.pending = &m
	}
	p.pmu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Err is the last publishing error, nil once a later attempt succeeded.
func (p *Publisher) Err() error {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	return p.lastErr
}

// Close gives the loop up to wait to write what is pending, then stops it.
func (p *Publisher) Close(wait time.Duration) {
	if p.done == nil {
		return
	}
	p.pmu.Lock()
	idle := p.pending == nil
	p.pmu.Unlock()
	if !idle {
		select {
		case <-time.After(wait):
		case <-p.flushed():
		}
	}
	p.cancel()
	<-p.done
}

// flushed closes when nothing is pending.
func (p *Publisher) flushed() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			p.pmu.Lock()
			idle := p.pending == nil
			p.pmu.Unlock()
			if idle {
				return
			}
			select {
			case <-p.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return ch
}

func (p *Publisher) loop(ctx context.Context) {
	defer close(p.done)
	backoff := 100 * time.Millisecond
	for {
		p.pmu.Lock()
		s := p.pending
		p.pmu.Unlock()
		if s == nil {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
				continue
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := p.Publish(wctx, *s)
		cancel()
		p.pmu.Lock()
		p.lastErr = err
		if err == nil && p.pending == s {
			p.pending = nil
		}
		p.pmu.Unlock()
		if err == nil {
			backoff = 100 * time.Millisecond
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
