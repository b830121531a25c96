package main

import (
	"go/format"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
		"< to <= in i < b",
		"negate if a == b && a > 0",
		"&& to || in a == b && a > 0",
		"== to != in a == b",
		"> to >= in a > 0",
		"delete break break",
		"|| to && in a <= b || n != 0",
		"<= to < in a <= b",
		"!= to == in n != 0",
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

func TestMutationIDs(t *testing.T) {
	src := []byte(`package x

type T[K comparable] struct{ n int }

func (t *T[K]) Inc() { t.n++ }

func G() { println(); println() }
`)
	ms, err := mutations(src)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID())
	}
	want := []string{"T.Inc: delete increment t.n++", "G: delete call println()", "G: delete call println() #2"}
	if !slices.Equal(ids, want) {
		t.Fatalf("IDs = %q, want %q", ids, want)
	}
}

func TestReadEquivalents(t *testing.T) {
	dir := t.TempDir()
	if got, err := readEquivalents(filepath.Join(dir, "missing.txt")); err != nil || got != nil {
		t.Fatalf("a lab without a list: %v, %v; want none", got, err)
	}
	path := filepath.Join(dir, "equivalent.txt")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# reviewed\n\nT.Dec: delete increment i-- -- the counter is never read again\n")
	got, err := readEquivalents(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "T.Dec: delete increment i--" || got[0].Reason != "the counter is never read again" || got[0].Line != 3 {
		t.Fatalf("entries = %+v", got)
	}
	write("T.Dec: delete increment i--\n")
	if _, err := readEquivalents(path); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("an entry without a reason: err = %v, want one naming line 1", err)
	}
}

func TestMutateReportLeavesEquivalentsOut(t *testing.T) {
	var b strings.Builder
	writeMutateReport(&b, []mutateScore{{
		ID: "09_shards", Killed: 9,
		Survived:   []mutation{{Line: 3, Func: "F", Desc: "delete call g()"}},
		Equivalent: []equivalentMutant{{M: mutation{Line: 7, Func: "F", Desc: "delete defer defer cancel()"}, Reason: "cancelled anyway"}},
		Problems:   []string{"stale entry"},
	}}, time.Second)
	out := b.String()
	for _, want := range []string{
		"labs 05-09 together: 9 of 10 killed (90%)",
		"09_shards: survived: line 3: F: delete call g()",
		"09_shards: equivalent (reviewed): line 7: F: delete defer defer cancel() -- cancelled anyway",
		"09_shards: problem: stale entry",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
