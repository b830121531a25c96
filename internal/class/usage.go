package class

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcd has no quota per user: one learner writing large values fills
// the whole cluster (NOSPACE) and then nobody's progress saves. What a
// class can do instead is give each learner a budget of bytes under
// their prefix, show who is over it (class status, the board), and trim
// them back to it (class repair).

// DefaultBudget is what one learner may keep under their prefix: a class
// of 50 at their budget fills 3.2 GiB, under the 4 GiB quota docs/class.md
// asks for. The course's own keys (summary, submissions, experiments)
// are a few hundred KiB.
const DefaultBudget = 64 << 20

// Usage is what one learner keeps in the cluster.
type Usage struct {
	Keys  int64 `json:"keys"`
	Bytes int64 `json:"bytes"` // keys and values, as a read returns them
	// AtLeast: counting stopped at the ceiling it was given, so Bytes
	// and Keys are lower bounds.
	AtLeast bool `json:"at_least,omitempty"`
}

// Over reports whether u is over budget (a budget of 0 is none).
func (u Usage) Over(budget int64) bool { return budget > 0 && u.Bytes > budget }

// String is "12.3 MiB in 40 keys" ("at least ..." for a lower bound).
func (u Usage) String() string {
	s := fmt.Sprintf("%s in %d keys", mib(u.Bytes), u.Keys)
	if u.AtLeast {
		s = "at least " + s
	}
	return s
}

// pageBytes is how much one read of a learner's keys aims to bring back;
// a page is at most 16 keys to begin with (etcd's largest value is its
// request limit, 1.5 MiB by default) and grows while values are small.
const pageBytes = 8 << 20

// MeasureUsage counts the keys and bytes under learner's prefix, as
// root, reading the values a page at a time (etcd cannot say a range's
// size without sending it). It stops once it counted more than ceiling
// (0: no ceiling) and says so in Usage.AtLeast: a board only needs to
// know that a learner is well over budget, not by how much.
func MeasureUsage(ctx context.Context, root *clientv3.Client, learner string, ceiling int64) (Usage, error) {
	var u Usage
	from, end := Prefix(learner), clientv3.GetPrefixRangeEnd(Prefix(learner))
	limit := int64(16)
	for {
		r, err := root.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(limit))
		if err != nil {
			return u, fmt.Errorf("class: measure what %s keeps: %w", learner, err)
		}
		var page int64
		for _, kv := range r.Kvs {
			page += int64(len(kv.Key) + len(kv.Value))
		}
		u.Keys += int64(len(r.Kvs))
		u.Bytes += page
		if !r.More || len(r.Kvs) == 0 {
			return u, nil
		}
		if ceiling > 0 && u.Bytes > ceiling {
			u.AtLeast = true
			return u, nil
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
		if avg := page / int64(len(r.Kvs)); avg > 0 {
			limit = min(max(pageBytes/avg, 16), 1024)
		}
	}
}

// MeasureClass measures every learner of names, stopping each at twice
// budget.
func MeasureClass(ctx context.Context, root *clientv3.Client, names []string, budget int64) (map[string]Usage, error) {
	out := make(map[string]Usage, len(names))
	for _, n := range names {
		u, err := MeasureUsage(ctx, root, n, 2*budget)
		if err != nil {
			return out, err
		}
		out[n] = u
	}
	return out, nil
}

// OverBudget is the board's line naming the learners over budget, ""
// when none is.
func OverBudget(usage map[string]Usage, budget int64) string {
	var over []string
	for _, n := range sortedKeys(usage) {
		if u := usage[n]; u.Over(budget) {
			over = append(over, fmt.Sprintf("%s %s", n, mib(u.Bytes)))
		}
	}
	if len(over) == 0 {
		return ""
	}
	return fmt.Sprintf("over the %s budget: %s; run playground class repair NAME", mib(budget), strings.Join(over, ", "))
}

// sizedKey is one key of a learner and what it costs.
type sizedKey struct {
	key   string
	bytes int64
}

// Trim deletes learner's largest keys until what they keep is within
// budget, sparing the class's own keys (the summary and submissions: the
// board and class verify read them). It reads keys a page at a time
// like MeasureUsage, and returns how many keys it deleted and the bytes
// they held. Deletes are taken while etcd is in NOSPACE, so it works on
// a full cluster.
func Trim(ctx context.Context, root *clientv3.Client, learner string, budget int64) (int, int64, error) {
	keys, total, err := sizedKeys(ctx, root, learner)
	if err != nil {
		return 0, 0, err
	}
	slices.SortFunc(keys, func(a, b sizedKey) int { return cmp.Compare(b.bytes, a.bytes) })
	deleted, freed := 0, int64(0)
	for _, k := range keys {
		if total-freed <= budget {
			break
		}
		if strings.HasPrefix(k.key, Prefix(learner)+ClassKeys) {
			continue
		}
		if _, err := root.Delete(ctx, k.key); err != nil {
			return deleted, freed, fmt.Errorf("class: delete %s: %w", k.key, err)
		}
		deleted++
		freed += k.bytes
	}
	return deleted, freed, nil
}

// sizedKeys lists every key under learner's prefix with its size,
// reading values a page at a time and keeping only names and sizes.
func sizedKeys(ctx context.Context, root *clientv3.Client, learner string) ([]sizedKey, int64, error) {
	var out []sizedKey
	var total int64
	from, end := Prefix(learner), clientv3.GetPrefixRangeEnd(Prefix(learner))
	for {
		r, err := root.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(16))
		if err != nil {
			return nil, 0, fmt.Errorf("class: read %s's keys: %w", learner, err)
		}
		for _, kv := range r.Kvs {
			n := int64(len(kv.Key) + len(kv.Value))
			out = append(out, sizedKey{key: string(kv.Key), bytes: n})
			total += n
		}
		if !r.More || len(r.Kvs) == 0 {
			return out, total, nil
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}
