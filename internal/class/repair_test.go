package class_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ownership-election/playground/embedetcd"
	"github.com/ownership-election/playground/internal/class"
	"github.com/ownership-election/playground/internal/class/classtest"
)

// TestRepairAfterALearnerFillsTheCluster: a learner writing large values
// under their own prefix fills a small quota; the cluster raises NOSPACE
// and refuses everyone's writes, the board's probe reports it with the
// fix, and Repair (compact, defragment, disarm) lets writes in again.
func TestRepairAfterALearnerFillsTheCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
	big := strings.Repeat("x", 512<<10)
	var full error
	for i := range 200 {
		if _, err := ada.Put(ctx, class.Prefix("ada")+fmt.Sprintf("flood/%d", i%4), big); err != nil {
			full = err
			break
		}
	}
	if !errors.Is(full, rpctypes.ErrNoSpace) {
		t.Fatalf("flooding an 8 MiB quota ended with %v, want NOSPACE", full)
	}
	alarm, err := class.Alarm(ctx, root, 3*time.Second)
	if err != nil || !strings.Contains(alarm, "NOSPACE") || !strings.Contains(alarm, "class repair") {
		t.Errorf("the board's alarm line: %q, %v; want NOSPACE and its fix", alarm, err)
	}
	bob, err := learnerSettings(c, actions[1]).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.Put(ctx, class.Prefix("bob")+"x", "1"); !errors.Is(err, rpctypes.ErrNoSpace) {
		t.Fatalf("bob writing while the cluster is full: %v, want NOSPACE (the reason for repair)", err)
	}
	if _, err := root.Delete(ctx, class.Prefix("ada")+"flood/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	done, err := class.Repair(ctx, root, class.RepairOptions{})
	if err != nil {
		t.Fatalf("repair: %v (did %q)", err, done)
	}
	if s := strings.Join(done, "\n"); !strings.Contains(s, "compacted") || !strings.Contains(s, "defragmented") || !strings.Contains(s, "disarmed NOSPACE") {
		t.Errorf("repair said:\n%s", s)
	}
	if _, err := bob.Put(ctx, class.Prefix("bob")+"x", "1"); err != nil {
		t.Errorf("bob writing after the repair: %v", err)
	}
	if alarm, _ := class.Alarm(ctx, root, 3*time.Second); alarm != "" {
		t.Errorf("alarm after repair: %q", alarm)
	}
}
