package replica

import (
	"bufio"
	"context"
	"io"
	"testing"
)

// relayed runs relay over answers with fault at the first one that
// counts (even numbers), claimed or not, and returns what came out.
func relayed(t *testing.T, fault string, claimed bool, answers ...int) []int {
	t.Helper()
	in := make(chan int, len(answers))
	for _, a := range answers {
		in <- a
	}
	close(in)
	out := make(chan int)
	claims := 0
	go relay(context.Background(), in, out, func(a int) bool { return a%2 == 0 },
		func() bool { claims++; return claimed }, fault, 0)
	var got []int
	for a := range out {
		got = append(got, a)
	}
	if claims != 1 {
		t.Errorf("%s: claimed %d times, want once (at the first answer that counts)", fault, claims)
	}
	return got
}

func TestStreamRelayDropsOnlyTheFirstAnswerThatCounts(t *testing.T) {
	got := relayed(t, "lose", true, 1, 2, 3, 4)
	if len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 4 {
		t.Errorf("lose: relayed %v, want [1 3 4]", got)
	}
	// Another replica claimed the fault first: nothing is dropped.
	if got := relayed(t, "lose", false, 1, 2, 3); len(got) != 3 {
		t.Errorf("lose, not claimed: relayed %v, want all three", got)
	}
}

func TestStreamRelayKeepsOrderForFaultsDoneFromOutside(t *testing.T) {
	for _, fault := range []string{"pause", "cut", "leader"} {
		got := relayed(t, fault, true, 2, 4, 5)
		if len(got) != 3 || got[0] != 2 || got[1] != 4 || got[2] != 5 {
			t.Errorf("%s: relayed %v, want [2 4 5]", fault, got)
		}
	}
}

func TestNewcomerRoleUntilItOwns(t *testing.T) {
	c := &Conn{out: bufio.NewWriter(io.Discard)}
	c.setNewcomer(true)
	if got := c.Role(); got != RoleNewcomer {
		t.Fatalf("a newcomer's role = %q", got)
	}
	c.Emit(Event{Kind: "acquired"})
	if got := c.Role(); got != RoleOwner {
		t.Fatalf("after acquired: %q", got)
	}
	c.Emit(Event{Kind: "released"})
	if got := c.Role(); got != RoleWaiter {
		t.Fatalf("after released: %q, want waiter (it is no newcomer any more)", got)
	}
}
