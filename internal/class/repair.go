package class

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// RepairOptions says whom Repair trims back to their budget.
type RepairOptions struct {
	Budget   int64    // what a learner may keep; 0 is DefaultBudget
	Learners []string // whom to trim; none: every learner on the roster over budget
}

// Repair does what a full class cluster needs: trim the learners over
// budget (their largest keys first, the class's own keys spared; deletes
// are taken while etcd is full), compact away the history before now,
// defragment every member so the space is really given back, and disarm
// the NOSPACE alarm so writes are taken again. It needs root, and
// reports each step done in a line.
func Repair(ctx context.Context, root *clientv3.Client, o RepairOptions) ([]string, error) {
	done, err := trimAll(ctx, root, o)
	if err != nil {
		return done, err
	}
	r, err := root.Get(ctx, RosterPrefix, clientv3.WithCountOnly())
	if err != nil {
		return done, fmt.Errorf("class repair: read the revision: %w", err)
	}
	rev := r.Header.Revision
	if _, err := root.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !isCompacted(err) {
		return done, fmt.Errorf("class repair: compact to revision %d: %w", rev, err)
	}
	done = append(done, fmt.Sprintf("compacted the history up to revision %d", rev))
	for _, ep := range root.Endpoints() {
		before, _ := root.Status(ctx, ep)
		if _, err := root.Defragment(ctx, ep); err != nil {
			return done, fmt.Errorf("class repair: defragment %s: %w", ep, err)
		}
		line := "defragmented " + ep
		if after, err := root.Status(ctx, ep); err == nil && before != nil {
			line += fmt.Sprintf(" (%s → %s)", mib(before.DbSize), mib(after.DbSize))
		}
		done = append(done, line)
	}
	alarms, err := root.AlarmList(ctx)
	if err != nil {
		return done, fmt.Errorf("class repair: read the alarms: %w", err)
	}
	for _, a := range alarms.Alarms {
		if _, err := root.AlarmDisarm(ctx, (*clientv3.AlarmMember)(a)); err != nil {
			return done, fmt.Errorf("class repair: disarm %s on member %x: %w", a.Alarm, a.MemberID, err)
		}
		done = append(done, fmt.Sprintf("disarmed %s on member %x", a.Alarm, a.MemberID))
	}
	if len(alarms.Alarms) == 0 {
		done = append(done, "no alarm was raised")
	}
	return done, nil
}

// trimAll trims the learners o names, or every learner over budget.
func trimAll(ctx context.Context, root *clientv3.Client, o RepairOptions) ([]string, error) {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	names := o.Learners
	if len(names) == 0 {
		roster, err := Roster(ctx, root)
		if err != nil {
			return nil, fmt.Errorf("class repair: %w", err)
		}
		usage, err := MeasureClass(ctx, root, roster, o.Budget)
		if err != nil {
			return nil, fmt.Errorf("class repair: %w", err)
		}
		for _, n := range roster {
			if usage[n].Over(o.Budget) {
				names = append(names, n)
			}
		}
	}
	var done []string
	for _, n := range names {
		keys, freed, err := Trim(ctx, root, n, o.Budget)
		if err != nil {
			return done, fmt.Errorf("class repair: %w", err)
		}
		done = append(done, fmt.Sprintf("trimmed %s to the %s budget: %d keys deleted (%s)", n, mib(o.Budget), keys, mib(freed)))
	}
	if len(names) == 0 {
		done = append(done, fmt.Sprintf("no learner keeps more than the %s budget", mib(o.Budget)))
	}
	return done, nil
}

func isCompacted(err error) bool { return errors.Is(err, rpctypes.ErrCompacted) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
