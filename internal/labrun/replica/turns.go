package replica

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// What the lock labs' replicas share: a lease kept alive while the
// replica lives (a new one once it is lost), and waiting for a held lock
// to go. The lab's own code (Acquire, Release, Write) is the learner's;
// these are the playground's.

// CallTimeout bounds each request a lock lab's replica sends, so that a
// replica cut off from etcd gives up and tries again, and a shutdown
// never waits on a network that is down. A replica's -call-timeout
// sets it (ParseConfig); exploration makes it no shorter than the TTL, so
// that a request's answer can come after the lease it was sent under.
var CallTimeout = 1500 * time.Millisecond

// Leases keeps the replica's current lease.
type Leases struct {
	cli  *clientv3.Client
	conn *Conn
	ttl  int
	sess *concurrency.Session
}

// NewLeases keeps leases of ttl seconds on cli, reporting grants to conn.
func NewLeases(cli *clientv3.Client, conn *Conn, ttl int) *Leases {
	return &Leases{cli: cli, conn: conn, ttl: ttl}
}

// Current returns the lease being kept alive, granting a new one if the
// last one ended (its keep-alive stopped: etcd no longer has it, or the
// client could not reach etcd for a TTL).
func (l *Leases) Current(ctx context.Context) (*concurrency.Session, error) {
	if l.sess != nil {
		select {
		case <-l.sess.Done():
			l.sess = nil
		default:
			return l.sess, nil
		}
	}
	gctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	g, err := l.cli.Grant(gctx, int64(l.ttl))
	if err != nil {
		return nil, fmt.Errorf("grant a lease: %w", err)
	}
	// The session's keep-alive and its final revoke use a context of
	// their own: the replica's ends at the shutdown, before Close.
	s, err := concurrency.NewSession(l.cli, concurrency.WithLease(g.ID), concurrency.WithTTL(l.ttl), concurrency.WithContext(context.Background()))
	if err != nil {
		return nil, fmt.Errorf("keep lease %x alive: %w", g.ID, err)
	}
	l.sess = s
	l.conn.Emit(Event{Kind: "note", TTL: g.TTL, Text: fmt.Sprintf("lease %x granted, TTL %d s, kept alive from now on", g.ID, g.TTL),
		Facts: &Facts{Op: "grant", Succeeded: true}})
	return s, nil
}

// Close revokes the lease being kept alive, if any: what a replica
// shutting down does last, so that nothing of it stays behind.
func (l *Leases) Close() {
	if l.sess == nil {
		return
	}
	select {
	case <-l.sess.Done():
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	l.sess.Orphan()
	l.cli.Revoke(ctx, l.sess.Lease())
}

// Drop gives up the lease being kept alive: revoked, so that whatever
// the lab's code put on it goes now, and a new one granted on the next
// Current. A replica calls it after a call of the lab's code failed
// without an answer (a Release whose answer was lost, an Acquire that may
// have written): what etcd did with the request is unknown, and a lock
// left on the lease would stand in every replica's way, its own too,
// until the lease ran out.
func (l *Leases) Drop() {
	l.Close()
	l.sess = nil
}

// WaitFree waits until key is deleted, at most d: a waiter's turn comes
// when the holder's key goes, by the holder's release or its lease's end.
func WaitFree(ctx context.Context, cli *clientv3.Client, kv clientv3.KV, key string, d time.Duration) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	g, err := kv.Get(wctx, key)
	if err != nil || len(g.Kvs) == 0 {
		return
	}
	for wr := range cli.Watch(wctx, key, clientv3.WithRev(g.Header.Revision+1)) {
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return
			}
		}
	}
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
