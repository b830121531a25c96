package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openSolution answers yes to "show the solution?" on a fresh screen over
// root and waits for the solution pane.
func openSolution(t *testing.T, root string, w, h int) *Model {
	t.Helper()
	m := New(testContext(), Options{Lab: demoLab(), Root: root, Lesson: demoLesson(), Now: func() time.Time { return fixedNow }})
	m.SetSize(w, h)
	m = runCmd(t, m, m.Init())
	m, _ = press(t, m, "s")
	m, cmd := press(t, m, "y")
	return runCmd(t, m, cmd)
}

// TestSolutionIsADiffOfTheLearnersFile: the solution pane shows the
// learner's file against the reference solution as a unified diff (the
// learner's lines with -, the solution's with +, hunk headers, three
// lines of context), d switches to the whole solution and back.
func TestSolutionIsADiffOfTheLearnersFile(t *testing.T) {
	m := openSolution(t, fixtureRoot, 80, 24)
	v := view(m)
	for _, want := range []string{
		"Your file → solution · 8 changed lines in 1 place · d: whole solution",
		"- only in yours (labs/00_demo/demo.go)",
		"+ only in the solution (solutions/00_demo/demo.go)",
		"@@ -1,12 +1,8 @@",
		"-// Package demo is a two-step fixture lab",
		"+// Package demo is the reference solution of the fixture lab.",
		" func Add(a, b int) int { return a + b }",
		"-    return n",
		"+func Double(n int) int { return 2 * n }",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("diff lacks %q:\n%s", want, v)
		}
	}
	if got := shortKeys(m); got != "enter/g d e tab" {
		t.Errorf("short help in the solution pane: %q", got)
	}

	m, _ = press(t, m, "d")
	v = view(m)
	if !strings.Contains(v, "Reference solution · solutions/00_demo/demo.go") || !strings.Contains(v, "   8 func Double(n int) int { return 2 * n }") ||
		strings.Contains(v, "@@") {
		t.Fatalf("d did not show the whole solution:\n%s", v)
	}
	m, _ = press(t, m, "d")
	if v = view(m); !strings.Contains(v, "@@ -1,12 +1,8 @@") {
		t.Fatalf("a second d did not go back to the diff:\n%s", v)
	}
}

// TestSolutionDiffFollowsTheFile: a file like the solution says so; once
// the learner changes it, coming back to the solution pane (tab) or a new
// grade shows the new diff.
func TestSolutionDiffFollowsTheFile(t *testing.T) {
	root := copyFixture(t)
	stub := filepath.Join(root, "labs/00_demo/demo.go")
	sol, err := os.ReadFile(filepath.Join(root, "solutions/00_demo/demo.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stub, sol, 0o644); err != nil {
		t.Fatal(err)
	}
	m := openSolution(t, root, 80, 24)
	if v := view(m); !strings.Contains(v, "Your demo.go is the same as the reference solution, line for line.") || strings.Contains(v, "@@") {
		t.Fatalf("an identical file is not said to be the same:\n%s", v)
	}

	changed := strings.Replace(string(sol), "return 2 * n", "return n + n", 1)
	if err := os.WriteFile(stub, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ = press(t, m, "tab") // to the README
	m, cmd := press(t, m, "tab", "tab")
	m = runCmd(t, m, cmd)
	if m.pane != paneSolution {
		t.Fatalf("pane = %v after cycling", m.pane)
	}
	v := view(m)
	for _, want := range []string{"1 place", "-func Double(n int) int { return n + n }", "+func Double(n int) int { return 2 * n }", "@@ -5,4 +5,4 @@"} {
		if !strings.Contains(v, want) {
			t.Errorf("the diff did not follow the file: lacks %q\n%s", want, v)
		}
	}

	// A grade (as watch mode makes after a save) reloads the diff too.
	if err := os.WriteFile(stub, sol, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ = press(t, m, "g")
	_, cmd = m.Update(gradeDoneMsg{seq: m.seq, report: failingReport()})
	m = runCmd(t, m, cmd)
	m.pane = paneSolution
	m.layout()
	if v := view(m); !strings.Contains(v, "the same as the reference solution") {
		t.Fatalf("a grade did not reload the diff:\n%s", v)
	}
}

// TestSolutionWithoutTheLearnersFile: with the learner's file gone the
// whole solution is shown, and why there is no diff.
func TestSolutionWithoutTheLearnersFile(t *testing.T) {
	root := copyFixture(t)
	if err := os.Remove(filepath.Join(root, "labs/00_demo/demo.go")); err != nil {
		t.Fatal(err)
	}
	m := openSolution(t, root, 100, 30)
	v := view(m)
	if !strings.Contains(v, "Reference solution") || !strings.Contains(v, "No diff: your file") || !strings.Contains(v, "is missing (r puts the original back)") {
		t.Fatalf("a missing file does not say why there is no diff:\n%s", v)
	}
}

// TestLongDiffScrollsAndFits: a diff longer than the pane keeps to the
// screen and scrolls.
func TestLongDiffScrollsAndFits(t *testing.T) {
	root := copyFixture(t)
	var b strings.Builder
	b.WriteString("package demo\n")
	for i := range 80 {
		b.WriteString("// a long line of the learner's own notes, much wider than the pane at eighty columns, number " + strings.Repeat("x", i%7) + "\n")
	}
	if err := os.WriteFile(filepath.Join(root, "labs/00_demo/demo.go"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{80, 24}, {160, 45}, {60, 15}} {
		w, h := size[0], size[1]
		m := openSolution(t, root, w, h)
		checkFits(t, m, w, h, "diff")
		top := view(m)
		m, _ = press(t, m, "f")
		if view(m) == top {
			t.Errorf("%dx%d: page down did not scroll the diff", w, h)
		}
		checkFits(t, m, w, h, "diff scrolled")
		m, _ = press(t, m, "d")
		checkFits(t, m, w, h, "whole solution")
	}
}

// TestDiffHunksHeadAsDiffU: the hunk headers read as diff -u writes
// them, an empty side included, and a last line without a line break is
// kept apart from one with it.
func TestDiffHunksHeadAsDiffU(t *testing.T) {
	for _, tc := range []struct{ mine, ref, want string }{
		{"", "a\nb\n", "@@ -0,0 +1,2 @@"},
		{"a\nb\n", "", "@@ -1,2 +0,0 @@"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", "@@ -2,7 +2,7 @@"},
		{"a\n", "a\nb\n", "@@ -1 +1,2 @@"},
	} {
		h := diffHunks(tc.mine, tc.ref)
		if len(h) != 1 || hunkHeader(h[0]) != tc.want {
			var got []string
			for _, x := range h {
				got = append(got, hunkHeader(x))
			}
			t.Errorf("diff %q → %q: headers %q, want [%s]", tc.mine, tc.ref, got, tc.want)
		}
	}
	if h := diffHunks("same\n", "same\n"); len(h) != 0 {
		t.Errorf("same texts gave %d hunks", len(h))
	}
	h := diffHunks("x\n", "x")
	if len(h) != 1 || len(h[0].Lines) != 2 || h[0].Lines[1].Content != "x" {
		t.Fatalf("a lost final line break is not a change: %+v", h)
	}
}
