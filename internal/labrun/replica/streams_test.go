package replica

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

// relayed runs relay over answers with fault at the first one that
// counts (even numbers), claimed or not, and returns what came out and
// whether the stream beneath was stopped.
func relayed(t *testing.T, fault string, claimed bool, answers ...int) ([]int, bool) {
	t.Helper()
	in := make(chan int, len(answers))
	for _, a := range answers {
		in <- a
	}
	close(in)
	out := make(chan int)
	claims, stopped := 0, false
	at := func() string {
		if claims++; claims == 1 && claimed {
			return fault
		}
		return ""
	}
	go relay(context.Background(), in, out, func(a int) bool { return a%2 == 0 }, at,
		func() (int, bool) { return -1, true }, func() { stopped = true }, 0)
	var got []int
	for a := range out {
		got = append(got, a)
	}
	if claims == 0 {
		t.Errorf("%s: never asked at an answer that counts", fault)
	}
	return got, stopped
}

func TestStreamRelayDropsOnlyTheFirstAnswerThatCounts(t *testing.T) {
	got, _ := relayed(t, "lose", true, 1, 2, 3, 4)
	if !slices.Equal(got, []int{1, 3, 4}) {
		t.Errorf("lose: relayed %v, want [1 3 4]", got)
	}
	// Another replica claimed the fault first: nothing is dropped.
	if got, _ := relayed(t, "lose", false, 1, 2, 3); len(got) != 3 {
		t.Errorf("lose, not claimed: relayed %v, want all three", got)
	}
}

func TestStreamRelayKeepsOrderForFaultsDoneFromOutside(t *testing.T) {
	for _, fault := range []string{"pause", "cut", "leader"} {
		got, stopped := relayed(t, fault, true, 2, 4, 5)
		if !slices.Equal(got, []int{2, 4, 5}) || stopped {
			t.Errorf("%s: relayed %v (stream stopped: %v), want [2 4 5], not stopped", fault, got, stopped)
		}
	}
}

// A fail at an answer (a leader's keep-alive, say) ends the stream
// there: the stream beneath is stopped, the ending answer goes out in
// place of the one hit, and nothing after it.
func TestStreamRelayFailEndsTheStreamAtTheAnswer(t *testing.T) {
	got, stopped := relayed(t, "fail", true, 1, 2, 3, 4)
	if !slices.Equal(got, []int{1, -1}) || !stopped {
		t.Errorf("fail: relayed %v (stopped %v), want [1 -1] and the stream beneath stopped", got, stopped)
	}
}

// A stream's answers count in the role the replica is in when each
// arrives: a fault aimed at the owner fires at the first answer after
// the replica leads, even on a stream opened while it waited; a fail
// aimed at the role the stream was opened in belongs to the opening.
func TestStreamAnswersCountInTheRoleOfTheMoment(t *testing.T) {
	var lines bytes.Buffer
	c := &Conn{out: bufio.NewWriter(&lines), in: bufio.NewScanner(strings.NewReader(strings.Repeat("{\"ok\":true}\n", 4)))}
	site := Site{File: "labs/07_election/election.go", Line: 9, RPC: StreamKeepAlive}
	f := newFaulter(c, 2, []Armed{
		{ID: 1, Fault: "fail", Role: RoleWaiter, Site: "labs/07_election/election.go:9", RPC: StreamKeepAlive, Occurrence: 1},
		{ID: 2, Fault: "pause", Role: RoleOwner, Site: "labs/07_election/election.go:9", RPC: StreamKeepAlive, Occurrence: 2},
	})
	at := f.atAnswer(site, RoleWaiter)
	if got := at(); got != "" {
		t.Fatalf("a waiter's answer on a stream it opened as a waiter met %q; a fail there is the opening's", got)
	}
	c.Emit(Event{Kind: "acquired"})
	if got := at(); got != "" {
		t.Fatalf("the owner's 1st answer met %q, want nothing (the fault is at its 2nd)", got)
	}
	if got := at(); got != "pause" {
		t.Fatalf("the owner's 2nd answer met %q, want pause", got)
	}
	c.out.Flush()
	if n := strings.Count(lines.String(), `"kind":"reached"`); n != 2 {
		t.Errorf("said reached %d times, want twice (as waiter, as owner):\n%s", n, lines.String())
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
