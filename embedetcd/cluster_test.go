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

// TestClusterCutLinkWithoutPreVote: with Pre-Vote off, a follower cut
// off from the leader loses it and campaigns with a higher term, and once
// the link is mended that term deposes the leader, as raft's comments on
// checkQuorum say: the cluster moves to a new term. (A member's Term is
// the term of the entries it applied, so the candidate's own raised term
// does not show; the new leader's does.)
func TestClusterCutLinkWithoutPreVote(t *testing.T) {
	cl, err := StartCluster(context.Background(), 3, WithPreVote(false), WithTicks(Ticks{TickMs: 25, ElectionMs: 250}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lead, err := cl.Leader()
	if err != nil {
		t.Fatal(err)
	}
	f := (lead + 1) % 3
	ms := cl.Members()
	if ms[f].server().Server.Cfg.PreVote {
		t.Fatal("WithPreVote(false) left Pre-Vote on")
	}
	term := func(i int) uint64 { return ms[i].server().Server.Term() }
	before := term(lead)
	if err := cl.CutLink(f, lead); err != nil {
		t.Fatal(err)
	}
	lost := func() bool { return ms[f].server().Server.Lead() == 0 }
	testwait.Until(t, 10*time.Second, "the cut-off follower to lose its leader", lost,
		func() string { return fmt.Sprintf("follower follows %x", ms[f].server().Server.Lead()) })
	if err := cl.MendLink(f, lead); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "the old leader to move to a higher term",
		func() bool { return term(lead) > before },
		func() string { return fmt.Sprintf("leader term %d, was %d", term(lead), before) })
	if err := cl.CutLink(f, f); err == nil {
		t.Error("a link from a member to itself was cut")
	}
}
