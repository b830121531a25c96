package attacks

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

// TestAttackFillTheClassCluster: with her own credentials, a learner
// writes values as large as the cluster takes, as fast as she can, until
// etcd is full and nobody's progress saves. A safe system (the class
// demo's limits, with a small quota so the test is quick) refuses her
// 1 MiB puts outright; names her on class status as over her budget;
// and lets class repair trim her keys, compact, defragment and disarm,
// after which a classmate saves again. An unsafe one leaves the class
// unable to save until someone finds the culprit by hand.
func TestAttackFillTheClassCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := classtest.Start(ctx, t.TempDir(), 1, true, embedetcd.WithQuota(16<<20), embedetcd.WithMaxRequestBytes(256<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root, err := c.Root.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	actions, err := class.Setup(ctx, c.Root, root, []class.Learner{{Name: "bob"}, {Name: "mallory"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bob, mallory := asLearner(t, c, actions[0]), asLearner(t, c, actions[1])
	if _, err := mallory.Put(ctx, class.Prefix("mallory")+"big", strings.Repeat("x", 1<<20)); err == nil {
		t.Error("a 1 MiB put was taken: the cluster has no request limit")
	}
	var full error
	for i := 0; full == nil && i < 1000; i++ {
		_, full = mallory.Put(ctx, class.Prefix("mallory")+fmt.Sprintf("fill/%04d", i), strings.Repeat("x", 250<<10))
	}
	if !errors.Is(full, rpctypes.ErrNoSpace) {
		t.Fatalf("the flood ended with %v, want NOSPACE (the attack itself)", full)
	}
	save := func() error {
		_, err := bob.Put(ctx, class.Prefix("bob")+class.SummaryKey, `{"learner":"bob"}`)
		return err
	}
	if err := save(); !errors.Is(err, rpctypes.ErrNoSpace) {
		t.Fatalf("bob's save on the full cluster: %v, want NOSPACE", err)
	}
	asRoot := []string{"--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--cacert", c.CACert, "--user", "root:" + classtest.RootPassword}
	code, out, errOut := runPlayground(append(asRoot, "class", "status", "--plain", "--budget", "1MiB")...)
	if code != 0 || !strings.Contains(out, "over budget: mallory keeps") || strings.Contains(out, "over budget: bob") {
		t.Errorf("class status --plain: exit %d; want mallory, and only her, named over budget\n%s%s", code, out, errOut)
	}
	code, out, errOut = runPlayground(append(asRoot, "class", "repair", "--budget", "1MiB")...)
	if code != 0 || !strings.Contains(out, "trimmed mallory") || !strings.Contains(out, "disarmed NOSPACE") {
		t.Fatalf("class repair: exit %d\n%s%s", code, out, errOut)
	}
	if err := save(); err != nil {
		t.Errorf("bob's save after class repair: %v", err)
	}
}

func asLearner(t *testing.T, c *classtest.Cluster, a class.Action) *clientv3.Client {
	t.Helper()
	s := c.Plain
	s.User, s.Password = a.Learner, a.Password
	cli, err := s.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}
