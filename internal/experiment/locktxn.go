package experiment

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/history"
)

// A write whose answer is lost may still have been applied: a request
// that met "leader changed", a member that went away while it was out,
// or no answer at all, can be committed by the next leader. Sent again
// blindly, a lock transaction would report the lock held by someone
// else when that someone is itself, or an unlock would report what it
// deleted wrongly. So the lock transactions here first read the key to
// find out (a linearizable read: only a leader with every committed
// entry answers it), then take the result or send again, and keep what
// each read found in their Facts (Resolved).

// CreateKey is the lock transaction: put key = value, under lease when
// it is not 0, if the key does not exist; else read the key. Value and
// lease together are the writer's own (a replica's name, its lease), so
// a key that holds them is this put's.
type CreateKey struct {
	Key, Value string
	Lease      clientv3.LeaseID
}

// created is etcd's answer to a createKey, or what reads found when
// answers were lost.
type created struct {
	Succeeded bool
	// Revision is the revision of etcd's answer, or, when a read showed
	// an earlier try applied, the revision that try created the key at.
	Revision int64
	// Held is the key: the one this put created when Succeeded, else
	// whoever holds it (nil if the answer showed none).
	Held     *history.StoreKey
	Tries    int
	Resolved []history.Resolution
}

// Facts are the answer as the history keeps it.
func (c CreateKey) Facts(a created) *history.Facts {
	return &history.Facts{Op: "txn", Key: c.Key, If: "create_revision(" + c.Key + ") = 0", Revision: a.Revision,
		Succeeded: a.Succeeded, Lease: int64(c.Lease), Held: a.Held, Tries: a.Tries, Resolved: a.Resolved}
}

// Commit sends the transaction until etcd answers it, the first try for
// at most perTry, each later one for twice as long as the one before;
// after a try whose outcome is unknown it reads the key and
// takes the key as its own if an earlier try had created it, else sends
// again (the comparison keeps a second try from creating the key twice).
func (c CreateKey) Commit(ctx context.Context, kv clientv3.KV, perTry time.Duration) (created, error) {
	var a created
	wait := 50 * time.Millisecond
	for {
		a.Tries++
		tctx, cancel := context.WithTimeout(ctx, perTry)
		resp, err := c.txn(tctx, kv)
		cancel()
		if err == nil {
			return c.answered(a, resp), nil
		}
		if ctx.Err() != nil || !UnknownOutcome(err) {
			return a, fmt.Errorf("create %s: %w", c.Key, err)
		}
		res, err := c.check(ctx, kv, err, perTry)
		if err != nil {
			return a, err
		}
		perTry = NextTry(perTry)
		a.Resolved = append(a.Resolved, res)
		if res.Applied {
			a.Succeeded, a.Revision, a.Held = true, res.Held.CreateRevision, res.Held
			return a, nil
		}
		if err := Sleep(ctx, wait); err != nil {
			return a, err
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

func (c CreateKey) txn(ctx context.Context, kv clientv3.KV) (*clientv3.TxnResponse, error) {
	put := clientv3.OpPut(c.Key, c.Value)
	if c.Lease != 0 {
		put = clientv3.OpPut(c.Key, c.Value, clientv3.WithLease(c.Lease))
	}
	return kv.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(c.Key), "=", 0)).
		Then(put).Else(clientv3.OpGet(c.Key)).Commit()
}

// answered reads etcd's answer. A failed comparison that finds the key
// its own is an earlier try applied after the read that checked it.
func (c CreateKey) answered(a created, resp *clientv3.TxnResponse) created {
	a.Revision = resp.Header.Revision
	if resp.Succeeded {
		a.Succeeded = true
		a.Held = &history.StoreKey{Key: c.Key, Value: c.Value, CreateRevision: a.Revision, ModRevision: a.Revision, Version: 1, Lease: int64(c.Lease)}
		return a
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return a
	}
	k := StoreKeyOf(kvs[0])
	a.Held = &k
	if c.mine(kvs[0]) {
		a.Succeeded, a.Revision = true, k.CreateRevision
		a.Resolved = append(a.Resolved, history.Resolution{Err: "the comparison failed on the key this replica had created: an earlier try was applied", Revision: resp.Header.Revision, Held: &k, Applied: true})
	}
	return a
}

func (c CreateKey) mine(kv *mvccpb.KeyValue) bool {
	return string(kv.Value) == c.Value && clientv3.LeaseID(kv.Lease) == c.Lease
}

// check reads the key after a try that ended with cause.
func (c CreateKey) check(ctx context.Context, kv clientv3.KV, cause error, perTry time.Duration) (history.Resolution, error) {
	res, kvs, err := ReadAfterLoss(ctx, kv, c.Key, cause, perTry)
	if err == nil && len(kvs) > 0 {
		res.Applied = c.mine(kvs[0])
	}
	return res, err
}

// ReadAfterLoss reads key after a write to it that ended with cause, its
// outcome unknown, and says what it found.
func ReadAfterLoss(ctx context.Context, kv clientv3.KV, key string, cause error, perTry time.Duration) (history.Resolution, []*mvccpb.KeyValue, error) {
	res := history.Resolution{Err: cause.Error()}
	var g *clientv3.GetResponse
	err := RetryEach(ctx, perTry, func(ctx context.Context) error {
		var err error
		g, err = kv.Get(ctx, key)
		return err
	})
	if err != nil {
		return res, nil, fmt.Errorf("read %s after %v: %w", key, cause, err)
	}
	res.Revision = g.Header.Revision
	if len(g.Kvs) > 0 {
		k := StoreKeyOf(g.Kvs[0])
		res.Held = &k
	}
	return res, g.Kvs, nil
}

// ResolvedText says, for an event's text, what the reads after lost
// answers found ("" when every answer came).
func ResolvedText(rs []history.Resolution) string {
	if len(rs) == 0 {
		return ""
	}
	r := rs[len(rs)-1]
	switch {
	case r.Applied:
		return fmt.Sprintf("; an answer was lost (%s), and a read at revision %d found the key its own", r.Err, r.Revision)
	case r.Held != nil:
		return fmt.Sprintf("; an answer was lost (%s), a read at revision %d found %s holding the key, and it tried again", r.Err, r.Revision, r.Held.Value)
	}
	return fmt.Sprintf("; an answer was lost (%s), a read at revision %d found no key, and it tried again", r.Err, r.Revision)
}
