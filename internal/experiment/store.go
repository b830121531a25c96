package experiment

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/internal/history"
)

// The store's view: what etcd itself holds under the run's prefix, read by
// an observer that is behind no fault proxy, so the learner can set it
// beside what each replica believes. It is read the same way on the
// in-process etcd and on a shared cluster (under the learner's prefix),
// and only while something asks for it: a headless run never reads it.

// StoreLease is what etcd says of a lease that a shown key is bound to.
type StoreLease struct {
	ID         int64
	GrantedTTL int64 // seconds
	// Gone: etcd no longer knows the lease (it expired or was revoked).
	Gone bool
	// Left is the time left as of StoreState.At. etcd reports whole
	// seconds, rounded down; when a grant or keep-alive answered in this
	// run agrees with that reading, Left is the sub-second time that
	// answer implies and Precise is set.
	Left    time.Duration
	Precise bool
}

// StoreState is one reading of the run's keys.
type StoreState struct {
	At       time.Time // when it was read; zero before the first reading
	Revision int64     // etcd's revision at that reading
	Keys     []history.StoreKey
	// Leases are the leases of the keys Groups shows in full.
	Leases map[int64]StoreLease
	// More is how many keys there were beyond Keys.
	More int64
	// Err is why the last reading failed ("" if it did not); Keys then
	// are from the reading before.
	Err string
}

// StoreGroup is the keys that share a directory ("election-0/", or "" for
// the keys at the top of the run's prefix), oldest first.
type StoreGroup struct {
	Dir  string
	Keys []history.StoreKey
}

// Distinct reports whether every key of the group has its own value (a
// queue of contenders, each naming itself) rather than values shared by
// several keys (shards per owner).
func (g StoreGroup) Distinct() bool {
	seen := map[string]bool{}
	for _, k := range g.Keys {
		if seen[k.Value] {
			return false
		}
		seen[k.Value] = true
	}
	return true
}

// Owners counts the group's keys per value, in the order the values first
// appear.
func (g StoreGroup) Owners() (values []string, counts map[string]int) {
	counts = map[string]int{}
	for _, k := range g.Keys {
		if counts[k.Value] == 0 {
			values = append(values, k.Value)
		}
		counts[k.Value]++
	}
	return values, counts
}

// Groups splits the keys by directory: each top-level key on its own,
// keys under a directory together, in the order of their oldest key.
func (s StoreState) Groups() []StoreGroup {
	var out []StoreGroup
	at := map[string]int{}
	for _, k := range s.Keys {
		dir := ""
		if i := strings.LastIndexByte(k.Key, '/'); i >= 0 {
			dir = k.Key[:i+1]
		}
		if dir == "" {
			out = append(out, StoreGroup{Keys: []history.StoreKey{k}})
			continue
		}
		i, ok := at[dir]
		if !ok {
			i = len(out)
			at[dir] = i
			out = append(out, StoreGroup{Dir: dir})
		}
		out[i].Keys = append(out[i].Keys, k)
	}
	return out
}

// heads are the leases worth a TimeToLive: the oldest key's in each group
// (the holder of a lock or an election), at most max of them.
func (s StoreState) heads(limit int) []int64 {
	var ids []int64
	for _, g := range s.Groups() {
		if id := g.Keys[0].Lease; id != 0 && !containsID(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > limit {
		ids = ids[len(ids)-limit:] // the newest groups matter most
	}
	return ids
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// storeEvery is how often the observer reads the store while a run is on
// and someone looks: a lease of 1 s drains visibly between readings, and
// the local countdown fills in between.
const storeEvery = 250 * time.Millisecond

// storeMaxKeys bounds a reading (a shard scenario has a few dozen keys).
const storeMaxKeys = 100

// storeMaxLeases bounds the TimeToLive calls of a reading.
const storeMaxLeases = 4

// Store returns the latest reading of what etcd holds under the run's
// prefix. The first call starts the observer, which reads every
// storeEvery until the run ends; the last reading stays.
func (run *Run) Store() StoreState {
	run.storeOnce.Do(func() {
		if run.admin == nil {
			return
		}
		run.mu.Lock()
		run.storeStarted = true
		run.mu.Unlock()
		go run.observeStore()
	})
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.store
}

// ReadStoreAs makes the store's view read with cli from now on: a script
// that turns etcd's authentication on (least-privilege) gives it a client
// logged in as root, as the admin client it read with before is refused.
// The script keeps cli open until the run ends (onClose).
func (run *Run) ReadStoreAs(cli *clientv3.Client) {
	run.mu.Lock()
	run.storeCli = cli
	run.mu.Unlock()
}

// storeClient is the client the store's view reads with.
func (run *Run) storeClient() *clientv3.Client {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.storeCli != nil {
		return run.storeCli
	}
	return run.admin
}

func (run *Run) observeStore() {
	t := time.NewTicker(storeEvery)
	defer t.Stop()
	for {
		st := run.readStore(run.ctx)
		if run.ctx.Err() != nil {
			return // cancelled mid-reading: keep the one before
		}
		run.setStore(st)
		select {
		case <-t.C:
		case <-run.ctx.Done():
			return
		}
	}
}

// setStore keeps a reading; a failed one keeps the keys of the one
// before. Nothing replaces the final reading.
func (run *Run) setStore(st StoreState) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.storeFinal {
		return
	}
	if st.Err != "" {
		prev := run.store
		prev.Err = st.Err
		st = prev
	}
	run.store = st
}

// finalStore takes the last reading, of what the script left behind,
// before the run cleans its keys up: a script's last steps can come
// faster than the observer reads.
func (run *Run) finalStore() {
	run.mu.Lock()
	started := run.storeStarted
	run.mu.Unlock()
	if !started {
		return
	}
	st := run.readStore(context.WithoutCancel(run.ctx))
	run.setStore(st)
	run.mu.Lock()
	run.storeFinal = true
	run.mu.Unlock()
}

// readStore reads the run's keys with one Get and the leases of the keys
// that hold something with one TimeToLive each.
func (run *Run) readStore(ctx context.Context) StoreState {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	cli := run.storeClient()
	g, err := cli.Get(ctx, "", clientv3.WithPrefix(), clientv3.WithLimit(storeMaxKeys),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	now := time.Now()
	if err != nil {
		return StoreState{At: now, Err: storeError(err)}
	}
	st := StoreState{At: now, Revision: g.Header.Revision, More: g.Count - int64(len(g.Kvs))}
	for _, kv := range g.Kvs {
		st.Keys = append(st.Keys, history.StoreKey{Key: string(kv.Key), Value: string(kv.Value),
			CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease})
	}
	st.Leases = map[int64]StoreLease{}
	for _, id := range st.heads(storeMaxLeases) {
		sent := time.Now()
		resp, err := cli.TimeToLive(ctx, clientv3.LeaseID(id))
		switch {
		case isLeaseNotFound(err):
			st.Leases[id] = StoreLease{ID: id, Gone: true}
			continue
		case err != nil:
			continue // the keys stand; this lease is shown without its TTL
		}
		st.Leases[id] = run.leaseReading(id, resp.TTL, resp.GrantedTTL, sent, now)
	}
	return st
}

// leaseReading turns etcd's TimeToLive answer (ttl whole seconds left,
// rounded down; -1 when the lease is gone) into the time left at now,
// sharpened by the last grant or keep-alive this run saw answered when
// that agrees with etcd.
func (run *Run) leaseReading(id, ttl, granted int64, sent, now time.Time) StoreLease {
	l := StoreLease{ID: id, GrantedTTL: granted}
	if ttl < 0 {
		l.Gone = true
		return l
	}
	l.Left = time.Duration(ttl) * time.Second
	run.mu.Lock()
	exp, ok := run.leaseExpiry[id]
	run.mu.Unlock()
	if ok {
		// etcd's reading was taken between sent and now; the estimate
		// agrees if it lies in [ttl, ttl+1) s give or take that window.
		// A reading of 0 is anything under a second, past expiry
		// included (etcd rounds toward zero and expires a lease on its
		// next pass, not at once).
		left := exp.Sub(now)
		slack := now.Sub(sent) + 50*time.Millisecond
		lo := l.Left - slack
		if ttl == 0 {
			lo = -time.Second - slack
		}
		if left >= lo && left < l.Left+time.Second+slack {
			l.Left, l.Precise = max(left, 0), true
		}
	}
	return l
}

// leaseAnswered records that etcd answered a grant or keep-alive of lease
// id, sent at sent (real time), with ttl seconds: etcd expires it no
// sooner than sent+ttl.
func (run *Run) leaseAnswered(id clientv3.LeaseID, sent time.Time, ttl int64) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.leaseExpiry == nil {
		run.leaseExpiry = map[int64]time.Time{}
	}
	run.leaseExpiry[int64(id)] = sent.Add(time.Duration(ttl) * time.Second)
}

// storeError is a failed reading in a few words.
func storeError(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "deadline exceeded"):
		return "etcd did not answer within 1s"
	case strings.Contains(msg, "user name") || strings.Contains(msg, "permission denied") || strings.Contains(msg, "authentication"):
		return "cannot read the keys: " + msg
	}
	return fmt.Sprintf("cannot read the keys: %s", msg)
}

// storeState is the observer's part of a Run.
type storeState struct {
	storeOnce    sync.Once
	storeStarted bool             // someone asked: the observer runs
	storeFinal   bool             // the last reading is taken
	storeCli     *clientv3.Client // reads with this instead of the admin client (readStoreAs)
	store        StoreState
	leaseExpiry  map[int64]time.Time // real time, from answered grants and keep-alives
}
