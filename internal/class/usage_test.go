package class_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
)

// TestBudgetFlagsAndRepairTrims: ada floods a small quota with distinct
// keys until NOSPACE. Her usage is over the budget and the board's line
// names her (and not bob); Repair without names trims her back to the
// budget, largest keys first, keeping her summary, and bob saves again.
func TestBudgetFlagsAndRepairTrims(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := classtest.Start(ctx, t.TempDir(), 1, true, embedetcd.WithQuota(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root := rootClient(t, c)
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "ada"}, {Name: "bob"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ada, err := learnerSettings(c, actions[0]).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ada.Close()
	if _, err := ada.Put(ctx, class.Prefix("ada")+class.SummaryKey, `{"learner":"ada"}`); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 256<<10)
	var full error
	for i := range 200 {
		if _, err := ada.Put(ctx, class.Prefix("ada")+fmt.Sprintf("flood/%03d", i), big); err != nil {
			full = err
			break
		}
	}
	if !errors.Is(full, rpctypes.ErrNoSpace) {
		t.Fatalf("flooding ended with %v, want NOSPACE", full)
	}
	const budget = 1 << 20
	usage, err := class.MeasureClass(ctx, root, []string{"ada", "bob"}, budget)
	if err != nil {
		t.Fatal(err)
	}
	if !usage["ada"].Over(budget) || usage["bob"].Over(budget) {
		t.Fatalf("usage %+v: want ada over the 1 MiB budget, bob under", usage)
	}
	if line := class.OverBudget(usage, budget); !strings.Contains(line, "ada") || strings.Contains(line, "bob") || !strings.Contains(line, "class repair") {
		t.Errorf("the board's line %q: want ada named with the fix, bob not", line)
	}
	done, err := class.Repair(ctx, root, class.RepairOptions{Budget: budget})
	if err != nil {
		t.Fatalf("repair: %v (did %q)", err, done)
	}
	if s := strings.Join(done, "\n"); !strings.Contains(s, "trimmed ada") || strings.Contains(s, "trimmed bob") || !strings.Contains(s, "disarmed NOSPACE") {
		t.Errorf("repair said:\n%s", s)
	}
	after, err := class.MeasureUsage(ctx, root, "ada", 0)
	if err != nil || after.Over(budget) {
		t.Errorf("ada after the repair: %v, %v; want within the budget", after, err)
	}
	if r, err := root.Get(ctx, class.Prefix("ada")+class.SummaryKey); err != nil || len(r.Kvs) != 1 {
		t.Errorf("ada's summary after the repair: %v, %v; want it kept", r, err)
	}
	bob, err := learnerSettings(c, actions[1]).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.Put(ctx, class.Prefix("bob")+class.SummaryKey, `{"learner":"bob"}`); err != nil {
		t.Errorf("bob saving after the repair: %v", err)
	}
}
