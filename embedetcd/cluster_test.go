package embedetcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ownership-election/playground/internal/testwait"
)

func TestClusterQuorum(t *testing.T) {
	cl, err := StartCluster(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cli := client(t, cl)
	put := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := cli.Put(ctx, "k", "v")
		return err
	}
	if err := put(5 * time.Second); err != nil {
		t.Fatalf("healthy cluster refused a write: %v", err)
	}
	ms := cl.Members()
	if err := ms[0].Stop(); err != nil {
		t.Fatal(err)
	}
	if err := put(10 * time.Second); err != nil {
		t.Fatalf("2 of 3 members up should still accept writes: %v", err)
	}
	if err := ms[1].Stop(); err != nil {
		t.Fatal(err)
	}
	if err := put(2 * time.Second); err == nil {
		t.Fatal("1 of 3 members up accepted a write: no quorum expected")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := ms[1].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := put(10 * time.Second); err != nil {
		t.Fatalf("after restart the cluster should accept writes again: %v", err)
	}
	if err := ms[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !ms[0].Running() || !ms[1].Running() {
		t.Fatal("members not running after restart")
	}
}

func TestClusterMoveLeader(t *testing.T) {
	cl, err := StartCluster(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	from, err := cl.Leader()
	if err != nil {
		t.Fatal(err)
	}
	to := (from + 1) % 3
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.MoveLeader(ctx, to); err != nil {
		t.Fatal(err)
	}
	var now int
	testwait.Until(t, 5*time.Second, fmt.Sprintf("member %d to lead", to),
		func() bool { now, err = cl.Leader(); return err == nil && now == to },
		func() string { return fmt.Sprintf("leader is %d (err %v)", now, err) })
}
