package main

import (
	"go/format"
	"slices"
	"strings"
	"testing"
)

func TestMutations(t *testing.T) {
	src := []byte(`package x

var limit = 1 < 2 // not in a function: left alone

func F(a, b int, ch chan int) bool {
	n := 0
	n++
	defer close(ch)
	for i := 0; i < b; i++ {
		if a == b && a > 0 {
			break
		}
	}
	return a <= b || n != 0
}
`)
	ms, err := mutations(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Desc)
		// Every mutant is still Go that parses (whether it compiles is
		// the grader's business).
		if _, err := format.Source(m.apply(src)); err != nil {
			t.Errorf("%s: %v\n%s", m.Desc, err, m.apply(src))
		}
	}
	want := []string{
		"delete increment n++",
		"delete defer defer close(ch)",
		"negate for i < b",
		"< to <=",
		"negate if a == b && a > 0",
		"&& to ||",
		"== to !=",
		"> to >=",
		"delete break break",
		"|| to &&",
		"<= to <",
		"!= to ==",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no mutant %q in %q", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d mutants, want %d: %q", len(got), len(want), got)
	}
	for _, m := range ms {
		if m.Desc == "negate if a == b && a > 0" && !strings.Contains(string(m.apply(src)), "if !(a == b && a > 0) {") {
			t.Errorf("negation applied as:\n%s", m.apply(src))
		}
	}
}
